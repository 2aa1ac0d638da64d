import { z } from "zod";
import { fencingTokenSchema } from "@/lib/operations/operation-schemas";

// Request and response of PUT /api/v1/operations/{id}/side-effects/{name}; the route validates
// with these and the OpenAPI document is generated from them.

export const sideEffectNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/, "use letters, digits and _ . : - only, starting with a letter or digit, at most 100 characters (^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$)");

export const sideEffectStates = ["intended", "sent", "confirmed", "failed", "unknown"] as const;

const providerId = z.string().min(1).max(500);

export const sideEffectRequestSchema = z
  .object({
    fencingToken: fencingTokenSchema,
    provider: z.string().regex(/^[\x21-\x7e]{1,100}$/, "must be 1..100 printable ASCII characters without spaces"),
    state: z.enum(sideEffectStates),
    providerRequestId: providerId.optional(),
    providerResourceId: providerId.optional(),
  })
  .strict();

export const sideEffectViewSchema = z.object({
  name: z.string(),
  provider: z.string(),
  downstreamKey: z.string().describe("Pass this to the provider as its idempotency key: the same for every attempt and takeover"),
  state: z.enum(sideEffectStates),
  providerRequestId: z.string().nullable(),
  providerResourceId: z.string().nullable(),
  attempt: z.number().int().describe("The attempt that last changed it"),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type SideEffectRequest = z.infer<typeof sideEffectRequestSchema>;
export type SideEffectView = z.infer<typeof sideEffectViewSchema>;
