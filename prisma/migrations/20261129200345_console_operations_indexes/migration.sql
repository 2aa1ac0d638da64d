-- CreateIndex
CREATE INDEX "operation_tenant_id_updated_at_idx" ON "operation"("tenant_id", "updated_at");

-- Hand-written (schema.prisma cannot express these two; the schema diff does not compare them).

-- The console's search by resource id (result->>'resourceId'): an expression index, partial so
-- operations without a resource id (failed, pending, in flight) cost nothing in it.
CREATE INDEX "operation_tenant_id_resource_id_idx" ON "operation"("tenant_id", ("result" ->> 'resourceId'))
  WHERE ("result" ->> 'resourceId') IS NOT NULL;

-- The reconcile queue, oldest first: unknown outcomes and processing operations whose lease
-- expired. Partial on the two states, so it stays as small as the queue plus what is in flight
-- however large the history grows. lease_expires_at is deliberately not a key column: heartbeats
-- change it, and leaving it out of every index keeps heartbeats HOT updates.
CREATE INDEX "operation_reconcile_queue_idx" ON "operation"("tenant_id", "created_at")
  WHERE "state" IN ('unknown', 'processing');
