import type { Db } from "@/lib/db";
import type { ApprovalView, ListApprovalsQuery } from "@/lib/approvals/approval-schemas";

const withOperation = { operation: { select: { tool: true, workflowId: true, args: true, state: true } } } as const;

type Row = Awaited<ReturnType<typeof findRows>>[number];

function findRows(db: Db, where: object, orderBy: object, take: number) {
  return db.approval.findMany({ where, orderBy, take, include: withOperation });
}

export function toApprovalView(a: Row): ApprovalView {
  return {
    id: a.id,
    operationId: a.operationId,
    tool: a.operation.tool,
    state: a.state,
    principal: a.requestedBy,
    workflowId: a.operation.workflowId,
    args: a.operation.args,
    fingerprint: a.fingerprint,
    expiresAt: a.expiresAt.toISOString(),
    decidedBy: a.decidedBy,
    decidedAt: a.decidedAt?.toISOString() ?? null,
    reason: a.reason,
    createdAt: a.createdAt.toISOString(),
    operationState: a.operation.state,
  };
}

// The pending queue oldest first (who has waited longest is next); decided ones newest first.
// `allowedTools` (a key's tool list; empty = all) hides approvals the caller may not decide.
export async function listApprovals(options: { db: Db; tenantId: string; query: ListApprovalsQuery; allowedTools?: string[] }): Promise<ApprovalView[]> {
  const { query } = options;
  const tools = options.allowedTools?.length ? { operation: { tool: { in: options.allowedTools } } } : {};
  const state = query.state === "decided" ? { in: ["approved", "rejected", "expired"] as const } : query.state;
  const where = { tenantId: options.tenantId, state: typeof state === "string" ? state : { in: [...state.in] }, ...tools };
  const orderBy = query.state === "pending" ? [{ createdAt: "asc" }, { id: "asc" }] : [{ decidedAt: "desc" }, { id: "desc" }];
  const rows = await findRows(options.db, where, orderBy, query.limit);
  return rows.map(toApprovalView);
}

export async function getApproval(options: { db: Db; tenantId: string; approvalId: string }): Promise<ApprovalView | null> {
  const row = await options.db.approval.findFirst({ where: { id: options.approvalId, tenantId: options.tenantId }, include: withOperation });
  return row ? toApprovalView(row) : null;
}

// The sidebar badge: pending approvals, counted up to `cap` (index-only on (tenant, state, created)).
export async function countPendingApprovals(options: { db: Db; tenantId: string; cap: number }): Promise<number> {
  const rows = await options.db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM (SELECT 1 FROM approval WHERE tenant_id = ${options.tenantId} AND state = 'pending' LIMIT ${options.cap}) capped`;
  return rows[0]?.n ?? 0;
}
