import type { Db } from "@/lib/db";
import { metrics } from "@/lib/metrics/registry";

// The periodic sweep (run by the worker): pending approvals past their expiry, and approved
// ones whose operation was never attempted past their use-by (decided_at + the tool's
// approvalTtlSeconds), become 'expired' and their operations 'rejected', even if no agent ever
// claims again. The count is of expiries this sweep wrote, so the metric counts each once. Batches of
// `batchSize` rows, each batch one statement; rows locked by a concurrent claim, decision or
// another sweeper are skipped (they settle it themselves). Returns how many expired.
export async function expireDueApprovals(db: Db, options: { batchSize?: number; maxBatches?: number } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 500;
  let total = 0;
  for (let i = 0; i < (options.maxBatches ?? 20); i++) {
    const rows = await db.$queryRaw<{ n: number }[]>`SELECT tollgate_expire_approvals(${batchSize}::int) AS n`;
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < batchSize) break;
  }
  if (total > 0) metrics().approvalExpiries.inc(total);
  return total;
}
