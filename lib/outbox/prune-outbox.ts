import type { Db } from "@/lib/db";

// Forgets outbox events (and their deliveries) older than `retentionDays`, and not redelivered
// within it, once none of their deliveries is still pending. Batched, skipping rows someone holds.
// The redelivery's time is on the event row, which FOR UPDATE re-checks in its newest version: the
// NOT EXISTS below is judged on the statement's snapshot, and a redeliver committing while this
// statement runs would otherwise lose the delivery it made pending (migration 20261202170000).
export async function pruneOutbox(options: { db: Db; retentionDays?: number; batchSize?: number; maxBatches?: number }): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  let deleted = 0;
  for (let i = 0; i < (options.maxBatches ?? 1000); i++) {
    const n = await options.db.$executeRaw`
      DELETE FROM outbox_event WHERE id IN (
        SELECT e.id FROM outbox_event e
        -- greatest() passes over a NULL: the event's time, or its last redelivery's.
        WHERE greatest(e.created_at, e.redelivered_at) < now() - make_interval(days => ${options.retentionDays ?? 30}::int)
          AND NOT EXISTS (SELECT 1 FROM event_delivery d WHERE d.event_id = e.id AND d.state = 'pending')
        LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
    deleted += n;
    if (n < batchSize) break;
  }
  return deleted;
}
