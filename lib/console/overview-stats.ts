import type { Db } from "@/lib/db";

export type OperationState = "awaiting_approval" | "pending" | "processing" | "succeeded" | "failed" | "unknown" | "rejected";

export type OverviewStats = {
  now: string;
  since: string;
  // States that are still open, counted over all time (these sets are small: they are the work in flight).
  open: Record<"awaiting_approval" | "pending" | "processing" | "unknown", number>;
  // Of the processing ones, those whose lease has run out (nobody holds them; they wait in the reconcile queue).
  expiredLeases: number;
  // Operations that ended in the window, by how they ended (time-bounded: the history grows without bound).
  ended: Record<"succeeded" | "failed" | "rejected", number>;
  oldestUnknown: { id: string; tool: string; createdAt: string } | null;
  // One point per minute / per hour of the window, oldest first, zeros included.
  claimsPerMinute: { at: string; value: number }[];
  unknownsPerHour: { at: string; value: number }[];
  topConflictTools: { tool: string; operations: number; conflicts: number; mismatches: number; replays: number; takeovers: number }[];
};

const WINDOW_HOURS = 24;
const openStates = ["awaiting_approval", "pending", "processing", "unknown"] as const;
const endedStates = ["succeeded", "failed", "rejected"] as const;

// The overview page's numbers for one tenant, in four statements sent at once. Each is bounded
// by an index: open states are a small range of (tenant_id, state, created_at); ended ones and
// the conflict table scan only the window's range of an index on created_at; the charts read
// only the window's range of audit_event (tenant_id, created_at).
export async function overviewStats(options: { db: Db; tenantId: string; now?: Date }): Promise<OverviewStats> {
  const { db, tenantId } = options;
  const now = options.now ?? new Date();
  const since = new Date(now.getTime() - WINDOW_HOURS * 3600_000);
  // The charts end with the current (partial) minute / hour; the hourly one reaches further back.
  const minuteStart = floorTo(now, 60_000) - (WINDOW_HOURS * 60 - 1) * 60_000;
  const hourStart = floorTo(now, 3600_000) - (WINDOW_HOURS - 1) * 3600_000;
  const [states, oldest, activity, conflicts] = await Promise.all([
    db.$queryRaw<{ state: OperationState; open: boolean; n: bigint; expired: bigint }[]>`
      SELECT state::text AS state, true AS open, count(*) AS n,
        count(*) FILTER (WHERE state = 'processing' AND lease_expires_at <= ${now}) AS expired
      FROM operation WHERE tenant_id = ${tenantId} AND state IN ('awaiting_approval', 'pending', 'processing', 'unknown')
      GROUP BY state
      UNION ALL
      SELECT state::text, false, count(*), 0 FROM operation
      WHERE tenant_id = ${tenantId} AND state IN ('succeeded', 'failed', 'rejected') AND created_at >= ${since}
      GROUP BY state`,
    db.$queryRaw<{ id: string; tool: string; created_at: Date }[]>`
      SELECT id, tool, created_at FROM operation WHERE tenant_id = ${tenantId} AND state = 'unknown' ORDER BY created_at, id LIMIT 1`,
    // Claims per minute come from the audit log, where every claim that created an operation
    // or started an attempt (first, retry or takeover) is one event with its own time. Replays
    // and 409/422/429 answers are not logged one by one (only counted per operation, below),
    // so the chart shows claims that did work, not every request. Unknowns per hour are the
    // "operation.unknown" events: a lease that expired without a report, or an agent that
    // reported "unknown"; resolved or not since.
    db.$queryRaw<{ minute: Date; claims: bigint; unknowns: bigint }[]>`
      SELECT date_trunc('minute', created_at) AS minute,
        count(*) FILTER (WHERE action IN ('operation.claimed', 'operation.attempt_started', 'operation.taken_over')) AS claims,
        count(*) FILTER (WHERE action = 'operation.unknown') AS unknowns
      FROM audit_event
      WHERE tenant_id = ${tenantId} AND created_at >= ${new Date(hourStart)} AND created_at <= ${now}
        AND action IN ('operation.claimed', 'operation.attempt_started', 'operation.taken_over', 'operation.unknown')
      GROUP BY 1`,
    // conflict_count counts every 409/422/429 answer to a claim, mismatch_count the 422s among them.
    db.$queryRaw<{ tool: string; operations: bigint; conflicts: bigint; mismatches: bigint; replays: bigint; takeovers: bigint }[]>`
      SELECT tool, count(*) AS operations, sum(conflict_count) AS conflicts, sum(mismatch_count) AS mismatches,
        sum(replay_count) AS replays, sum(takeover_count) AS takeovers
      FROM operation WHERE tenant_id = ${tenantId} AND created_at >= ${since}
      GROUP BY tool HAVING sum(conflict_count) > 0
      ORDER BY sum(conflict_count) DESC, tool LIMIT 5`,
  ]);

  const open = Object.fromEntries(openStates.map((s) => [s, 0])) as OverviewStats["open"];
  const ended = Object.fromEntries(endedStates.map((s) => [s, 0])) as OverviewStats["ended"];
  let expiredLeases = 0;
  for (const row of states) {
    if (row.open) open[row.state as keyof typeof open] = Number(row.n);
    else ended[row.state as keyof typeof ended] = Number(row.n);
    expiredLeases += Number(row.expired);
  }
  const first = oldest[0];
  return {
    now: now.toISOString(),
    since: since.toISOString(),
    open,
    expiredLeases,
    ended,
    oldestUnknown: first ? { id: first.id, tool: first.tool, createdAt: first.created_at.toISOString() } : null,
    claimsPerMinute: buckets(minuteStart, 60_000, WINDOW_HOURS * 60, activity.map((r) => ({ at: r.minute, value: Number(r.claims) }))),
    unknownsPerHour: buckets(hourStart, 3600_000, WINDOW_HOURS, activity.map((r) => ({ at: r.minute, value: Number(r.unknowns) }))),
    topConflictTools: conflicts.map((r) => ({
      tool: r.tool,
      operations: Number(r.operations),
      conflicts: Number(r.conflicts),
      mismatches: Number(r.mismatches),
      replays: Number(r.replays),
      takeovers: Number(r.takeovers),
    })),
  };
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
