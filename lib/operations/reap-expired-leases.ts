import type { Db } from "@/lib/db";
import { metrics } from "@/lib/metrics/registry";

type ReapOptions = { db: Db; graceSeconds?: number; batchSize?: number; maxBatches?: number };

// The worker's lease reaper: a processing operation whose lease expired, and which no new
// attempt may take over (takeover "never", or attempts used up), becomes unknown now, even if
// no agent ever claims it again, so operation.unknown reaches subscribers and the operator's
// queue at once. One SQL call per batch (tollgate_reap_expired_leases): rows locked by a
// concurrent complete, heartbeat or another reaper are skipped and settle themselves.
export async function reapExpiredLeases(options: ReapOptions): Promise<number> {
  const total = await inBatches(options, (limit, grace) => options.db.$queryRaw<{ n: number }[]>`SELECT tollgate_reap_expired_leases(${limit}::int, ${grace}::int) AS n`);
  if (total > 0) metrics().unknowns.inc({ cause: "lease-reaped" }, total);
  return total;
}

// The same job's second half: an attempt a webhook (or an inbox match) settled under a live lease
// may still report until that lease runs out; one that never does is ended as lease_lost then
// (tollgate_close_settled_attempts), so no attempt stays open forever.
export async function closeSettledAttempts(options: ReapOptions): Promise<number> {
  return inBatches(options, (limit, grace) => options.db.$queryRaw<{ n: number }[]>`SELECT tollgate_close_settled_attempts(${limit}::int, ${grace}::int) AS n`);
}

// Batch after batch until one comes back short (or maxBatches), so one run never holds many locks.
async function inBatches(options: ReapOptions, batch: (limit: number, graceSeconds: number) => Promise<{ n: number }[]>): Promise<number> {
  const batchSize = options.batchSize ?? 500;
  let total = 0;
  for (let i = 0; i < (options.maxBatches ?? 20); i++) {
    const n = (await batch(batchSize, Math.round(options.graceSeconds ?? 0)))[0]?.n ?? 0;
    total += n;
    if (n < batchSize) break;
  }
  return total;
}
