import { z } from "zod";
import { toolNameSchema } from "@/lib/tools/tool-schema";
import { isJson, isJsonObject, type Json } from "@/lib/operations/canonical-json";

// Request and response shapes of the operation protocol. The route handlers validate with
// these and /api/v1/openapi.json is generated from them, so the two cannot drift apart.

// 1..255 printable ASCII characters (0x21..0x7E), as the contract and the IETF draft ask.
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

// Tokens come from a bigint sequence: anything past its maximum is malformed (a 400), not a stale
// token, and must not reach PostgreSQL's ::bigint cast, which would fail the statement (a 500).
const INT64_MAX = 9223372036854775807n;
export const fencingTokenSchema = z
  .union([z.string().regex(/^[1-9][0-9]{0,18}$/, "must be the fencingToken string from the claim"), z.number().int().positive()])
  .transform((v) => BigInt(v))
  .refine((v) => v <= INT64_MAX, "must be the fencingToken string from the claim (at most 9223372036854775807)");
const shortText = (max: number) => z.string().min(1).max(max);
// Any JSON value, kept as parsed (JSON.parse already proved it is JSON). Not z.json(): that
// rebuilds objects (dropping keys such as "__proto__") and emits a recursive $ref that does
// not resolve once embedded in the OpenAPI document.
const anyJson = z.unknown().meta({ description: "Any JSON value" });
// The same for a request: checked too, because JSON.parse reads 1e400 as Infinity, which
// JSON.stringify would store as null (a result silently changed, on every replay).
const anyJsonInput = z
  .custom<Json>(isJson, { message: "must be JSON whose numbers are finite (1e400 is out of range)" })
  .meta({ description: "Any JSON value" });

export const claimRequestSchema = z
  .object({
    tool: toolNameSchema,
    // Checked, not rebuilt: z.record would drop keys such as "__proto__" and change the request.
    args: z
      .custom<{ [key: string]: Json }>(isJsonObject, { message: "args must be a JSON object" })
      .default({})
      .meta({ type: "object", description: "The tool's arguments (any JSON object)" }),
    workflowId: shortText(200).optional(),
    traceId: shortText(200).optional(),
  })
  .strict();

export const heartbeatRequestSchema = z.object({ fencingToken: fencingTokenSchema }).strict();

export const completeRequestSchema = z
  .object({
    fencingToken: fencingTokenSchema,
    outcome: z.enum(["succeeded", "failed", "unknown"]),
    retryable: z.boolean().optional(),
    result: z
      .object({ statusCode: z.number().int().min(100).max(599).optional(), body: anyJsonInput.optional(), resourceId: shortText(500).optional() })
      .strict()
      .optional(),
    provider: z.object({ requestId: shortText(500).optional(), resourceId: shortText(500).optional() }).strict().optional(),
    error: z.object({ code: shortText(200), message: z.string().max(4000) }).strict().optional(),
  })
  .strict()
  .refine((c) => !c.retryable || c.outcome === "failed", { message: "retryable is only meaningful with outcome \"failed\"", path: ["retryable"] });

const RESOLVE_REASON_MAX = 2000;
const RESOLVE_RESOURCE_ID_MAX = 500;
const RESOLVE_EVIDENCE_MAX = 4000;

export const resolveRequestSchema = z
  .object({
    outcome: z.enum(["succeeded", "failed", "retry"]),
    reason: z.string().trim().min(1, "a reason is required").max(RESOLVE_REASON_MAX),
    resourceId: shortText(RESOLVE_RESOURCE_ID_MAX).optional(),
    evidence: z.string().max(RESOLVE_EVIDENCE_MAX).optional(),
  })
  .strict();

// The body a resolve route reads: every text at its longest, each character written as a JSON
// escape (`\uXXXX`, 6 bytes: Python's json.dumps writes anything beyond ASCII so), plus 4 KiB
// for the rest. It was 16 KiB, and a reason and evidence in Japanese within the limits the schema
// (and the OpenAPI document) publishes were refused with 413.
export const RESOLVE_BODY_MAX_BYTES = 6 * (RESOLVE_REASON_MAX + RESOLVE_RESOURCE_ID_MAX + RESOLVE_EVIDENCE_MAX) + 4096;

// How many attempts of an operation a person was looking at when they decided (console resolve
// and inbox match): if another ran since, what they checked was about an earlier attempt.
export const seenAttemptsSchema = z.number().int().min(0).max(1_000_000);

export const lookupQuerySchema = z.object({ tool: toolNameSchema, idempotencyKey: z.string().regex(idempotencyKeyPattern) });

const timestamp = z.string().describe("RFC 3339 UTC timestamp");
const resultSchema = z.object({ statusCode: z.number().int().nullable(), body: anyJson, resourceId: z.string().nullable() });
const errorSchema = z.object({ code: z.string(), message: z.string() });
const stateSchema = z.enum(["awaiting_approval", "pending", "processing", "succeeded", "failed", "unknown", "rejected"]);

export const operationViewSchema = z.object({
  operationId: z.string(),
  tool: z.string(),
  state: stateSchema,
  attempts: z.number().int(),
  leaseExpiresAt: timestamp.nullable(),
  notBefore: timestamp.nullable(),
  downstreamKey: z.string(),
  result: resultSchema.nullable(),
  error: errorSchema.nullable(),
  resultExpiresAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  resolution: z
    .object({ outcome: z.string(), by: z.string(), via: z.string(), reason: z.string(), resourceId: z.string().nullable(), evidence: z.string().nullable(), at: timestamp, fromState: z.string() })
    .nullable(),
});

export const claimCreatedSchema = z.object({
  operationId: z.string(),
  state: z.literal("processing"),
  tool: z.string(),
  attempt: z.object({ number: z.number().int(), fencingToken: z.string(), leaseExpiresAt: timestamp }),
  downstreamKey: z.string(),
  resultExpiresAt: timestamp.nullable(),
});

export const claimAwaitingApprovalSchema = z.object({
  operationId: z.string(),
  state: z.literal("awaiting_approval"),
  tool: z.string(),
  approval: z.object({ id: z.string(), expiresAt: timestamp }),
  downstreamKey: z.string(),
  resultExpiresAt: timestamp.nullable(),
});

export const replaySchema = z.object({
  operationId: z.string(),
  state: z.enum(["succeeded", "failed"]),
  tool: z.string(),
  result: resultSchema.nullable(),
  error: errorSchema.nullable(),
  resultExpiresAt: timestamp,
});

export const heartbeatResponseSchema = z.object({ leaseExpiresAt: timestamp });

export type ClaimRequest = z.infer<typeof claimRequestSchema>;
export type CompleteRequest = z.infer<typeof completeRequestSchema>;
export type ResolveRequest = z.infer<typeof resolveRequestSchema>;
export type OperationView = z.infer<typeof operationViewSchema>;
export type ClaimCreated = z.infer<typeof claimCreatedSchema>;
export type Replay = z.infer<typeof replaySchema>;
