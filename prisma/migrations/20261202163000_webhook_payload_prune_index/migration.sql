-- From a review of `prune` (2026-12-02): payload pruning found its rows through the index on
-- received_at alone, or a scan, and every event row stays after its payload is pruned: each hourly
-- batch walked past the whole pruned history first. Measured on a scratch database with 300k
-- pruned events and 21.5k kept payloads, one batch of 1,000: a sequential scan of 6,462 buffers
-- (40 ms), against 18 buffers (1.3 ms) through this index. It holds only events whose payload is
-- still kept, so it shrinks as they are pruned; nothing else read the full index on received_at
-- (the inbox's reads lead with the tenant), so it goes, and an ingest maintains as many indexes
-- as before.
DROP INDEX "webhook_event_received_at_idx";
CREATE INDEX "webhook_event_payload_kept_idx" ON "webhook_event" ("received_at") WHERE "payload" IS NOT NULL;
