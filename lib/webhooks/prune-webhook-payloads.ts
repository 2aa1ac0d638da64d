import type { Db } from "@/lib/db";

// Forgets webhook payloads older than their connection's payloadRetentionDays: the payload
// becomes null and payloadPrunedAt says when, while the event row, its status and its match
// stay (the trace still shows which event settled which operation). The correlation value is
// part of the payload too, and goes with it, unless it is one of Tollgate's own names for the
// operation the event is linked to (its id, its downstream key or a side effect's; the keys only
// while the operation is stored, as they are told apart by looking them up there): what the
// provider put there about anything else is its data, not ours to keep. Batched, skipping rows
// someone holds, so a large backlog never holds long locks. Returns how many were pruned.
// `npm run tollgate -- prune` and the worker both call it.
// Times are the database's (`now` only for tests): the machine running `prune` may have a clock
// of its own.
export async function pruneWebhookPayloads(db: Db, now: Date | null = null, options: { batchSize?: number; maxBatches?: number } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 10_000;
  const at = now?.toISOString() ?? null;
  let pruned = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await db.$executeRaw`
      UPDATE webhook_event e SET payload = NULL, payload_pruned_at = coalesce(${at}::timestamptz, now()),
        correlation_value = CASE WHEN e.operation_id IS NOT NULL AND (e.correlation_value = e.operation_id
          OR EXISTS (SELECT 1 FROM operation o WHERE o.id = e.operation_id AND o.downstream_key = e.correlation_value)
          OR EXISTS (SELECT 1 FROM side_effect s
            WHERE s.tenant_id = e.tenant_id AND s.operation_id = e.operation_id AND s.downstream_key = e.correlation_value))
          THEN e.correlation_value END
      WHERE e.id IN (
        SELECT w.id FROM webhook_event w JOIN webhook_connection c ON c.id = w.connection_id
        -- The partial index on received_at where the payload is kept (migration 20261202163000),
        -- bounded by the shortest retention a connection can have (1 day).
        WHERE w.payload IS NOT NULL
          AND w.received_at < coalesce(${at}::timestamptz, now()) - interval '1 day'
          AND w.received_at < coalesce(${at}::timestamptz, now()) - make_interval(days => c.payload_retention_days)
        LIMIT ${batchSize} FOR UPDATE OF w SKIP LOCKED)`;
    pruned += n;
    if (n < batchSize) break;
  }
  return pruned;
}
