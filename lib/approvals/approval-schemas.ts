import { z } from "zod";

// Request and response shapes of the approvals API; routes validate with these and the
// OpenAPI document is generated from them.

export const decisionRequestSchema = z
  .object({
    decision: z.enum(["approve", "reject"]),
    reason: z.string().trim().max(2000).optional(),
  })
  .strict()
  // A "no" must say why: the agent's next claim gets a 403 and somebody will ask.
  .refine((d) => d.decision === "approve" || (d.reason ?? "").length > 0, { message: "a reason is required to reject", path: ["reason"] });

export const approvalStates = ["pending", "approved", "rejected", "expired"] as const;

export const listApprovalsQuerySchema = z
  .object({
    state: z.enum([...approvalStates, "decided"]).default("pending"),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    // The previous page's nextCursor.
    cursor: z.string().min(1).max(400).optional(),
  })
  .strict();

const timestamp = z.string().describe("RFC 3339 UTC timestamp");

export const approvalViewSchema = z.object({
  id: z.string(),
  operationId: z.string(),
  tool: z.string(),
  state: z.enum(approvalStates),
  principal: z.string().describe("The principal whose claim asked for approval"),
  workflowId: z.string().nullable(),
  args: z.unknown().meta({ description: "The exact (canonical) arguments being approved" }),
  fingerprint: z.string(),
  expiresAt: timestamp,
  decidedBy: z.string().nullable(),
  decidedAt: timestamp.nullable(),
  reason: z.string().nullable(),
  createdAt: timestamp,
  operationState: z.string(),
});

export const approvalListSchema = z.object({
  approvals: z.array(approvalViewSchema),
  nextCursor: z.string().nullable().describe("Pass as ?cursor= for the next page; null on the last page"),
});

export type DecisionRequest = z.infer<typeof decisionRequestSchema>;
export type ApprovalView = z.infer<typeof approvalViewSchema>;
export type ListApprovalsQuery = z.infer<typeof listApprovalsQuerySchema>;
