import type { Db } from "@/lib/db";

// Deletes terminal operations whose result retention has passed, in batches so a large
// backlog never holds long locks. Never touches processing, pending or unknown operations:
// only a replayable result may be forgotten. A later claim with the same key starts anew.
// Nor one settled while its attempt still works (a webhook settled it under a live lease the
// attempt keeps by heartbeats): its complete may still come, and a claim of the key must not
// start a second operation while that first call may be in flight.
// Nor a flagged one: the flag (evidence that contradicts the outcome, an attempt that may have
// acted twice) lives on the row and waits for an operator's decision; pruning it would drop the
// open question from every queue and let the key start anew as if it were settled.
export async function pruneOperations(options: { db: Db; batchSize?: number; maxBatches?: number }): Promise<{ deleted: number }> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 10_000;
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await options.db.$executeRaw`
      DELETE FROM operation WHERE id IN (
        SELECT id FROM operation
        WHERE state IN ('succeeded', 'failed', 'rejected') AND result_expires_at < now()
          AND (open_attempt_until IS NULL OR open_attempt_until < now())
          AND flagged_at IS NULL
        LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
    deleted += n;
    if (n < batchSize) break;
  }
  return { deleted };
}
