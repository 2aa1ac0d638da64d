import { z } from "zod";
import { problemCodes } from "@/lib/http/problem";

// The problem+json bodies, for the OpenAPI document. Every problem has the common fields; some
// carry more (AGENT-API.md's 422 lists the differing paths), and those get a schema of their own.
// API review: every problem pointed to one open schema, so a client generated from the document
// had no typed `mismatch` to show which argument changed.
export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.enum(Object.keys(problemCodes) as [keyof typeof problemCodes, ...(keyof typeof problemCodes)[]]),
  })
  .loose();

const timestamp = z.iso.datetime({ offset: true });

// 400: a body or query that fails its schema lists every failure at its path ("policy.leaseSeconds").
export const invalidRequestProblemSchema = problemSchema
  .extend({ errors: z.array(z.object({ path: z.string(), message: z.string() })).optional() })
  .loose();

// 409 of a claim: the operation it landed on, and for operation-in-progress when its lease ends.
export const claimConflictProblemSchema = problemSchema.extend({ operationId: z.string().optional(), leaseExpiresAt: timestamp.nullable().optional() }).loose();

// 422: the key was first used with other arguments; the differing paths, never their values.
export const keyReusedProblemSchema = problemSchema
  .extend({ code: z.literal("idempotency-key-reused"), operationId: z.string(), mismatch: z.array(z.string()).describe('Differing paths, e.g. "args.items[2].sku"') })
  .loose();

// 429: the retry's backoff is not over; notBefore is when it is.
export const retryBackoffProblemSchema = problemSchema.extend({ code: z.literal("retry-backoff"), operationId: z.string(), notBefore: timestamp.nullable() }).loose();

// 413: the limit the body went past (not said for chunk extensions the server refused).
export const payloadTooLargeProblemSchema = problemSchema.extend({ code: z.literal("payload-too-large"), maxBytes: z.number().int().optional() }).loose();
