import { z } from "zod";
import { lowercaseNameSchema } from "@/lib/http/lowercase-name";

// PUT/GET /api/v1/event-subscriptions/{name}: request and response shapes (also the OpenAPI document's).

export const eventTypes = [
  "operation.succeeded",
  "operation.failed",
  "operation.unknown",
  "operation.resolved",
  "approval.requested",
  "approval.decided",
  "webhook.unmatched",
] as const;

export type EventType = (typeof eventTypes)[number];

export const subscriptionNameSchema = lowercaseNameSchema;

const endpointUrl = z
  .string()
  .max(2000)
  .refine((raw) => {
    try {
      const url = new URL(raw);
      return (url.protocol === "https:" || url.protocol === "http:") && url.username === "" && url.password === "";
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials");

export const subscriptionRequestSchema = z
  .object({
    url: endpointUrl,
    events: z
      .array(z.enum(eventTypes))
      .min(1, "subscribe to at least one event type")
      .refine((e) => new Set(e).size === e.length, "each event type once"),
    // A fresh signing secret, shown once in this response; the old one stops working at once.
    rotateSecret: z.boolean().optional(),
  })
  .strict();

export const subscriptionViewSchema = z.object({
  name: z.string(),
  url: z.string(),
  events: z.array(z.enum(eventTypes)),
  createdAt: z.string(),
  updatedAt: z.string(),
});

// Only the response that created the subscription (or rotated its secret) carries it.
export const subscriptionPutResponseSchema = subscriptionViewSchema.extend({
  secret: z.string().optional().describe("whsec_…: verify deliveries with it (Standard Webhooks). Shown once."),
});

export type SubscriptionRequest = z.infer<typeof subscriptionRequestSchema>;
export type SubscriptionView = z.infer<typeof subscriptionViewSchema>;
