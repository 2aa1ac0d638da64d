import type { Db } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";

export type Count = { value: number; capped: boolean };

export type OverviewStats = {
  now: string;
  since: string;
  // Open states, over all time (the work in flight; small unless something is badly wrong).
  open: Record<"awaiting_approval" | "pending" | "processing" | "unknown", Count>;
  // Of the processing ones, those whose lease has run out: nobody holds them.
  expiredLeases: Count;
  // Operations whose evidence contradicts the recorded outcome, not yet cleared by an operator.
  flagged: Count;
  // Operations claimed in the window that have ended, by how.
  ended: Record<"succeeded" | "failed" | "rejected", Count>;
  oldestUnknown: { id: string; tool: string; createdAt: string } | null;
  // One point per minute / per hour, oldest first, zeros included. `from` is where counting
  // starts: the window's start, or later when a busy tenant had more events than are read.
  claimsPerMinute: { at: string; value: number }[];
  unknownsPerHour: { at: string; value: number }[];
  activity: { from: string; capped: boolean };
  topConflictTools: { tool: string; operations: number; conflicts: number; mismatches: number; replays: number; takeovers: number }[];
  conflictsFrom: { from: string; capped: boolean };
};

const WINDOW_HOURS = 24;
// Every query reads a bounded number of index entries or rows, however large the tenant: exact
// for an ordinary tenant, and for a very busy one a clearly marked "10,000+" or a chart that
// covers the most recent part of the window. (Exact 24 h aggregates over millions of rows
// would need rollup tables; these caps keep the page around the cost of a list page.)
const COUNT_CAP = 10_000;
const EXPIRED_CAP = 1_000;
const EVENT_CAP = 50_000;
const OPERATION_CAP = 20_000;

type CountRow = { key: string; n: bigint };

const openStates = ["awaiting_approval", "pending", "processing", "unknown"] as const;
const endedStates = ["succeeded", "failed", "rejected"] as const;

// count(*) of at most `cap` index entries of (tenant_id, state, created_at), optionally from `since`.
function cappedCount(tenantId: string, state: string, since: Date | null, cap: number): Prisma.Sql {
  return Prisma.sql`SELECT ${state} AS key, (SELECT count(*) FROM (SELECT 1 FROM operation WHERE tenant_id = ${tenantId}
    AND state = ${state}::operation_state ${since ? Prisma.sql`AND created_at >= ${since}` : Prisma.empty} LIMIT ${cap}) x) AS n`;
}

// The overview's numbers for one tenant: four statements, sent at once.
export async function overviewStats(options: { db: Db; tenantId: string; now?: Date }): Promise<OverviewStats> {
  const { db, tenantId } = options;
  const now = options.now ?? new Date();
  const since = new Date(now.getTime() - WINDOW_HOURS * 3600_000);
  // The charts end with the current (partial) minute / hour; the hourly one reaches further back.
  const minuteStart = floorTo(now, 60_000) - (WINDOW_HOURS * 60 - 1) * 60_000;
  const hourStart = floorTo(now, 3600_000) - (WINDOW_HOURS - 1) * 3600_000;
  const cap = COUNT_CAP + 1;

  const [counts, oldest, activity, conflicts] = await Promise.all([
    // Index-only scans of (tenant_id, state, created_at), each stopping after COUNT_CAP + 1 entries.
    // Expired leases: the leases of the oldest EXPIRED_CAP + 1 processing operations (a heap
    // read each; expired leases are among the oldest, as leases are short).
    db.$queryRaw<CountRow[]>`
      ${Prisma.join(
        [...openStates.map((state) => cappedCount(tenantId, state, null, cap)), ...endedStates.map((state) => cappedCount(tenantId, state, since, cap))],
        " UNION ALL ",
      )}
      UNION ALL
      SELECT 'expired', count(*) FILTER (WHERE lease_expires_at <= ${now}) FROM (
        SELECT lease_expires_at FROM operation WHERE tenant_id = ${tenantId} AND state = 'processing' ORDER BY created_at LIMIT ${EXPIRED_CAP + 1}) p
      UNION ALL
      SELECT 'flagged', count(*) FROM (SELECT 1 FROM operation WHERE tenant_id = ${tenantId} AND flagged_at IS NOT NULL LIMIT ${cap}) f`,
    db.$queryRaw<{ id: string; tool: string; created_at: Date }[]>`
      SELECT id, tool, created_at FROM operation WHERE tenant_id = ${tenantId} AND state = 'unknown' ORDER BY created_at, id LIMIT 1`,
    // Both charts come from the audit log, newest first through (tenant_id, created_at):
    // claims are the events of every claim that created an operation or started an attempt
    // (first, retry or takeover), each with its own time. Replays and 409/422/429 answers are
    // not logged one by one (only counted per operation, see below), so the chart shows claims
    // that did work, not every request. Unknowns are "operation.unknown" events: a lease that
    // expired without a report, or an agent that reported "unknown"; resolved since or not.
    db.$queryRaw<{ minute: Date; claims: bigint; unknowns: bigint; oldest: Date; n: bigint }[]>`
      SELECT date_trunc('minute', created_at) AS minute,
        count(*) FILTER (WHERE action IN ('operation.claimed', 'operation.attempt_started', 'operation.taken_over')) AS claims,
        count(*) FILTER (WHERE action = 'operation.unknown') AS unknowns, min(created_at) AS oldest, count(*) AS n
      FROM (SELECT created_at, action FROM audit_event WHERE tenant_id = ${tenantId} AND created_at >= ${new Date(hourStart)} AND created_at <= ${now}
        ORDER BY created_at DESC LIMIT ${EVENT_CAP}) recent
      GROUP BY 1`,
    // conflict_count counts every 409/422/429 answer to a claim, mismatch_count the 422s among them.
    db.$queryRaw<{ tool: string; operations: bigint; conflicts: bigint; mismatches: bigint; replays: bigint; takeovers: bigint; oldest: Date; n: bigint }[]>`
      SELECT tool, count(*) AS operations, sum(conflict_count) AS conflicts, sum(mismatch_count) AS mismatches,
        sum(replay_count) AS replays, sum(takeover_count) AS takeovers, min(created_at) AS oldest, count(*) AS n
      FROM (SELECT tool, conflict_count, mismatch_count, replay_count, takeover_count, created_at FROM operation
        WHERE tenant_id = ${tenantId} AND created_at >= ${since} ORDER BY created_at DESC LIMIT ${OPERATION_CAP}) recent
      GROUP BY tool`,
  ]);

  const count = (key: string, max = COUNT_CAP): Count => {
    const n = Number(counts.find((r) => r.key === key)?.n ?? 0);
    return { value: Math.min(n, max), capped: n > max };
  };
  const activityCapped = total(activity) >= EVENT_CAP;
  const conflictsCapped = total(conflicts) >= OPERATION_CAP;
  const first = oldest[0];
  return {
    now: now.toISOString(),
    since: since.toISOString(),
    open: Object.fromEntries(openStates.map((s) => [s, count(s)])) as OverviewStats["open"],
    expiredLeases: count("expired", EXPIRED_CAP),
    flagged: count("flagged"),
    ended: Object.fromEntries(endedStates.map((s) => [s, count(s)])) as OverviewStats["ended"],
    oldestUnknown: first ? { id: first.id, tool: first.tool, createdAt: first.created_at.toISOString() } : null,
    claimsPerMinute: buckets(minuteStart, 60_000, WINDOW_HOURS * 60, activity.map((r) => ({ at: r.minute, value: Number(r.claims) }))),
    unknownsPerHour: buckets(hourStart, 3600_000, WINDOW_HOURS, activity.map((r) => ({ at: r.minute, value: Number(r.unknowns) }))),
    activity: { from: activityCapped ? oldestOf(activity) : new Date(hourStart).toISOString(), capped: activityCapped },
    topConflictTools: conflicts
      .filter((r) => Number(r.conflicts) > 0)
      .sort((a, b) => Number(b.conflicts) - Number(a.conflicts) || a.tool.localeCompare(b.tool))
      .slice(0, 5)
      .map((r) => ({
        tool: r.tool,
        operations: Number(r.operations),
        conflicts: Number(r.conflicts),
        mismatches: Number(r.mismatches),
        replays: Number(r.replays),
        takeovers: Number(r.takeovers),
      })),
    conflictsFrom: { from: conflictsCapped ? oldestOf(conflicts) : since.toISOString(), capped: conflictsCapped },
  };
}

function total(groups: { n: bigint }[]): number {
  return groups.reduce((sum, g) => sum + Number(g.n), 0);
}

function oldestOf(groups: { oldest: Date }[]): string {
  return new Date(Math.min(...groups.map((g) => g.oldest.getTime()))).toISOString();
}

function floorTo(date: Date, size: number): number {
  return Math.floor(date.getTime() / size) * size;
}

// Sums sparse per-minute rows into `count` buckets of `size` ms from `start`, zeros included.
function buckets(start: number, size: number, count: number, rows: { at: Date; value: number }[]): { at: string; value: number }[] {
  const values = new Array<number>(count).fill(0);
  for (const row of rows) {
    const k = Math.floor((row.at.getTime() - start) / size);
    if (k >= 0 && k < count) values[k] = (values[k] ?? 0) + row.value;
  }
  return values.map((value, k) => ({ at: new Date(start + k * size).toISOString(), value }));
}
