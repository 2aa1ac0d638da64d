import { z } from "zod";
import { flagTimeSchema } from "@/lib/operations/clear-flag";

// Request and response shapes of the approvals API; routes validate with these and the
// OpenAPI document is generated from them.

const decisionFields = {
  decision: z.enum(["approve", "reject"]),
  reason: z.string().trim().max(2000).optional(),
};
// A "no" must say why: the agent's next claim gets a 403 and somebody will ask.
const reasonToReject = (d: { decision: string; reason?: string }) => d.decision === "approve" || (d.reason ?? "").length > 0;
const reasonToRejectMessage = { message: "a reason is required to reject", path: ["reason"] };

export const decisionRequestSchema = z.object(decisionFields).strict().refine(reasonToReject, reasonToRejectMessage);

// The console's decision also says which flag its page showed on the operation (its time, null for
// none): a yes is refused when the flag is another one by then (tollgate_decide_approval).
export const consoleDecisionRequestSchema = z
  .object({ ...decisionFields, seenFlaggedAt: flagTimeSchema.nullable().optional() })
  .strict()
  .refine(reasonToReject, reasonToRejectMessage);

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
