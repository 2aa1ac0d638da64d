import type { ApprovalView } from "@/lib/approvals/approval-schemas";
import { iso } from "@/lib/operations/operation-view";

// What tollgate_approval_view returns: timestamps as PostgreSQL prints them.
export type SqlApproval = Omit<ApprovalView, "expiresAt" | "decidedAt" | "createdAt"> & {
  expiresAt: string;
  decidedAt: string | null;
  createdAt: string;
};

export function approvalView(a: SqlApproval): ApprovalView {
  return {
    id: a.id,
    operationId: a.operationId,
    tool: a.tool,
    state: a.state,
    principal: a.principal,
    workflowId: a.workflowId,
    args: a.args,
    fingerprint: a.fingerprint,
    expiresAt: iso(a.expiresAt),
    decidedBy: a.decidedBy,
    decidedAt: iso(a.decidedAt),
    reason: a.reason,
    createdAt: iso(a.createdAt),
    operationState: a.operationState,
  };
}
