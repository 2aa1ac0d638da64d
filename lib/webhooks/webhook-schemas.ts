import { z } from "zod";
import { jsonRecord } from "@/lib/http/json-record";
import { seenAttemptsSchema } from "@/lib/operations/operation-schemas";
import { flagTimeSchema } from "@/lib/operations/clear-flag";
import { lowercaseNameSchema } from "@/lib/http/lowercase-name";

// Request and response shapes of the webhook routes. The handlers validate with these and
// /api/v1/openapi.json is generated from them.

export const connectionNameSchema = lowercaseNameSchema;

export const webhookSchemes = ["standard-webhooks", "stripe"] as const;
export type WebhookScheme = (typeof webhookSchemes)[number];

// Standard Webhooks secrets are "whsec_" + base64 of the key (24 to 64 bytes by the spec's
// advice); Stripe's are opaque strings used as the HMAC key as they are.
const secretSchema = z.string().min(16, "must be at least 16 characters").max(200);
const standardSecret = /^whsec_[A-Za-z0-9+/]{22,}={0,2}$/;

// A dotted path into the JSON payload ("data.metadata.tollgate_operation"); array items by index.
const correlationPathSchema = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+){0,15}$/, "must be a dotted path such as data.metadata.tollgate_operation");

// The longest event type an outcome map may name; ingest marks a longer type as cut, so it
// matches no key (storedEventType in ingest-webhook.ts).
export const MAX_EVENT_TYPE_LENGTH = 200;

export const webhookConnectionRequestSchema = z
  .object({
    scheme: z.enum(webhookSchemes),
    // Required when the connection is created; omitted on a replace, the stored secrets stay.
    secrets: z.array(secretSchema).min(1).max(5).optional(),
    toleranceSeconds: z.number().int("must be a whole number").min(1).max(3600).default(300),
    correlation: z.object({ path: correlationPathSchema }).strict(),
    outcomes: jsonRecord(z.string().min(1).max(MAX_EVENT_TYPE_LENGTH), z.enum(["succeeded", "failed"]))
      .default({})
      .refine((o) => Object.keys(o).length <= 200, { message: "at most 200 event types" }),
    payloadRetentionDays: z.number().int("must be a whole number").min(1).max(3650).default(30),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.scheme !== "standard-webhooks") return;
    c.secrets?.forEach((s, i) => {
      if (!standardSecret.test(s) || Buffer.from(s.slice(6), "base64").length < 16) {
        ctx.addIssue({ code: "custom", path: ["secrets", i], message: "a Standard Webhooks secret is whsec_ followed by the base64 of at least 16 bytes" });
      }
    });
  });

export type WebhookConnectionRequest = z.infer<typeof webhookConnectionRequestSchema>;

const timestamp = z.string().describe("RFC 3339 UTC timestamp");

export const webhookConnectionViewSchema = z.object({
  name: z.string(),
  connectionId: z.string(),
  // Where the provider sends events: the connection id in it is the only thing to keep secret-ish.
  endpointUrl: z.string(),
  scheme: z.enum(webhookSchemes),
  // Secrets are never returned; this says how many are accepted right now.
  secretCount: z.number().int(),
  toleranceSeconds: z.number().int(),
  correlation: z.object({ path: z.string() }),
  outcomes: z.record(z.string(), z.enum(["succeeded", "failed"])),
  payloadRetentionDays: z.number().int(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export type WebhookConnectionView = z.infer<typeof webhookConnectionViewSchema>;

// What ingest itself can decide: `ignored` is only ever an operator's (from the inbox).
export const ingestStatuses = ["matched", "unmatched", "unmapped", "contradicting"] as const;

export const webhookIngestResponseSchema = z.union([
  z.object({ duplicate: z.literal(true), eventId: z.string() }),
  z.object({ duplicate: z.literal(false), eventId: z.string(), status: z.enum(ingestStatuses) }),
]);

export type WebhookIngestResponse = z.infer<typeof webhookIngestResponseSchema>;

// The console's inbox actions.
export const matchEventRequestSchema = z
  .object({
    operationId: z.string().trim().min(1, "choose an operation").max(200),
    outcome: z.enum(["succeeded", "failed"]),
    reason: z.string().trim().max(2000).optional(),
    // The event's status as the operator saw it: decided meanwhile by someone else, it is a 409
    // rather than matched over their decision. Required to match an ignored event.
    eventStatus: z.enum(["unmatched", "unmapped", "contradicting", "ignored"]).optional(),
    // The attempts the chosen candidate had as the operator saw it: another ran since, it is a 409.
    seenAttempts: seenAttemptsSchema.optional(),
    // The chosen candidate's flag as the operator saw it (its time), null for none: a match may
    // take a flag down, so one raised or cleared since is a 409 and the operator reads it first.
    seenFlaggedAt: flagTimeSchema.nullable().optional(),
  })
  .strict();

export const ignoreEventRequestSchema = z
  .object({ reason: z.string().trim().min(1, "a reason is required").max(2000) })
  .strict();

export type MatchEventRequest = z.infer<typeof matchEventRequestSchema>;
