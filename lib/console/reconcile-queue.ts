import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db";

// Unknown, or processing with an expired lease. The literal IN list lets PostgreSQL use the
// partial index operation_reconcile_queue_idx (WHERE state IN ('unknown', 'processing')).
const queuePredicate = Prisma.sql`o.state IN ('unknown', 'processing') AND (o.state = 'unknown' OR o.lease_expires_at < now())`;

// Operations that need a person: unknown outcomes, and processing ones whose lease expired
// (nobody is working on them and nobody has declared them unknown yet).
// `cap` bounds the work for the sidebar badge, which every console page renders: past it the
// badge says "cap+" instead of scanning a huge backlog on each click.
export async function countReconcileQueue(options: { db: Db; tenantId: string; cap?: number }): Promise<number> {
  const limit = options.cap === undefined ? Prisma.empty : Prisma.sql`LIMIT ${options.cap}`;
  const rows = await options.db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM (SELECT 1 FROM operation o WHERE o.tenant_id = ${options.tenantId} AND ${queuePredicate} ${limit}) q`;
  return Number(rows[0]?.n ?? 0);
}

export type ReconcileRow = {
  id: string;
  tool: string;
  principal: string;
  state: "unknown" | "processing";
  createdAt: string;
  updatedAt: string;
  leaseExpiresAt: string | null;
  attempts: number;
  maxAttempts: number;
  conflicts: number;
  // Its flag, if any (a superseded attempt said it succeeded, say): shown in the row, and the
  // resolve says which it saw, since resolving takes it down.
  flag: { at: string; reason: string } | null;
  // The operation's error, else the newest attempt's: what the agent (or the lease expiry) last said.
  lastError: { code?: string; message?: string } | null;
};

export type ReconcileCursor = { createdAt: string; id: string };

type SqlRow = {
  id: string;
  tool: string;
  principal: string;
  state: "unknown" | "processing";
  created_at: Date;
  updated_at: Date;
  lease_expires_at: Date | null;
  attempt_count: number;
  max_attempts: number;
  conflict_count: number;
  flagged_at: Date | null;
  flag_reason: string | null;
  last_error: ReconcileRow["lastError"];
};

// The queue, oldest first, a page at a time (keyset on created_at, id), read in order from the
// partial index operation_reconcile_queue_idx: fast however many finished operations exist.
export async function listReconcileQueue(options: {
  db: Db;
  tenantId: string;
  limit?: number;
  after?: ReconcileCursor | null;
}): Promise<{ rows: ReconcileRow[]; next: ReconcileCursor | null; now: number }> {
  const limit = Math.min(Math.max(options.limit ?? 100, 1), 500);
  const afterAt = options.after?.createdAt ?? "-infinity";
  const afterId = options.after?.id ?? "";
  const rows = await options.db.$queryRaw<SqlRow[]>`
    SELECT o.id, o.tool, o.principal, o.state::text AS state, o.created_at, o.updated_at, o.lease_expires_at,
      o.attempt_count, o.max_attempts, o.conflict_count, o.flagged_at, o.flag_reason,
      coalesce(o.error, (SELECT a.error FROM attempt a
        WHERE a.tenant_id = o.tenant_id AND a.operation_id = o.id AND a.error IS NOT NULL
        ORDER BY a.number DESC LIMIT 1)) AS last_error
    FROM operation o
    WHERE o.tenant_id = ${options.tenantId} AND ${queuePredicate}
      AND (o.created_at, o.id) > (${afterAt}::timestamptz, ${afterId})
    ORDER BY o.created_at, o.id LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    rows: page.map((r) => ({
      id: r.id,
      tool: r.tool,
      principal: r.principal,
      state: r.state,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
      leaseExpiresAt: r.lease_expires_at?.toISOString() ?? null,
      attempts: r.attempt_count,
      maxAttempts: r.max_attempts,
      conflicts: r.conflict_count,
      flag: r.flagged_at ? { at: r.flagged_at.toISOString(), reason: r.flag_reason ?? "" } : null,
      lastError: r.last_error,
    })),
    next: rows.length > limit && last ? { createdAt: last.created_at.toISOString(), id: last.id } : null,
    // When the page was read: ages are shown relative to it, so server and browser render the same text.
    now: Date.now(),
  };
}
