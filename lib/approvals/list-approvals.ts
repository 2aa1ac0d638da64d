import type { Db } from "@/lib/db";
import { isStorableDate } from "@/lib/db/storable-date";
import { ProblemError } from "@/lib/http/problem";
import type { ApprovalView, ListApprovalsQuery } from "@/lib/approvals/approval-schemas";
import { unstorableText } from "@/lib/http/json-limits";

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

export type ApprovalPage = { approvals: ApprovalView[]; nextCursor: string | null };

// The pending queue oldest first (who has waited longest is next); decided ones newest first.
// Keyset pages: the cursor is the (time, id) of the last row shown, so a page never repeats or
// skips a row however many arrive meanwhile. `allowedTools` (a key's tool list; empty = all)
// hides approvals the caller may not decide.
export async function listApprovals(options: { db: Db; tenantId: string; query: ListApprovalsQuery; allowedTools?: string[] }): Promise<ApprovalPage> {
  const { query } = options;
  const pending = query.state === "pending";
  const column = pending ? "createdAt" : "decidedAt";
  const tools = options.allowedTools?.length ? { operation: { tool: { in: options.allowedTools } } } : {};
  const state = query.state === "decided" ? { in: ["approved", "rejected", "expired"] as const } : query.state;
  const after = query.cursor ? decodeApprovalCursor(query.cursor) : null;
  const op = pending ? "gt" : "lt";
  const keyset = after ? { OR: [{ [column]: { [op]: after.at } }, { [column]: after.at, id: { [op]: after.id } }] } : {};
  const where = { tenantId: options.tenantId, state: typeof state === "string" ? state : { in: [...state.in] }, ...tools, ...keyset };
  const direction = pending ? "asc" : "desc";
  const rows = await findRows(options.db, where, [{ [column]: direction }, { id: direction }], query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const lastAt = last ? (pending ? last.createdAt : last.decidedAt) : null;
  return {
    approvals: page.map(toApprovalView),
    nextCursor: rows.length > query.limit && last && lastAt ? encodeApprovalCursor(lastAt, last.id) : null,
  };
}

function encodeApprovalCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id])).toString("base64url");
}

// A cursor this server did not write is a 400, never a 500 or a silently wrong page.
function decodeApprovalCursor(cursor: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    // The id goes to PostgreSQL as it is: U+0000 (or half a surrogate pair) in it would be a 500.
    if (typeof at === "string" && typeof id === "string" && isStorableDate(new Date(at)) && !unstorableText.test(id)) return { at: new Date(at), id };
  } catch {
    // fall through
  }
  throw new ProblemError("invalid-request", "cursor: not a cursor from a previous page", { extras: { errors: [{ path: "cursor", message: "not a cursor from a previous page" }] } });
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
