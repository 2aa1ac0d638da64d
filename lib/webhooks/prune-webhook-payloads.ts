import type { Db } from "@/lib/db";

// Forgets webhook payloads older than their connection's payloadRetentionDays: the payload
// becomes null and payloadPrunedAt says when, while the event row, its status and its match
// stay (the trace still shows which event settled which operation). Batched, skipping rows
// someone holds, so a large backlog never holds long locks. Returns how many were pruned.
// `npm run tollgate -- prune` and the worker both call it.
export async function pruneWebhookPayloads(db: Db, now: Date = new Date(), options: { batchSize?: number; maxBatches?: number } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 10_000;
  const at = now.toISOString();
  let pruned = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await db.$executeRaw`
      UPDATE webhook_event SET payload = NULL, payload_pruned_at = ${at}::timestamptz
      WHERE id IN (
        SELECT e.id FROM webhook_event e JOIN webhook_connection c ON c.id = e.connection_id
        WHERE e.payload IS NOT NULL
          AND e.received_at < ${at}::timestamptz - make_interval(days => c.payload_retention_days)
        LIMIT ${batchSize} FOR UPDATE OF e SKIP LOCKED)`;
    pruned += n;
    if (n < batchSize) break;
  }
  return pruned;
}
