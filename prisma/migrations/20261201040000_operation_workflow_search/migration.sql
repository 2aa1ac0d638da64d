-- The console's search finds operations by their workflow id: an operator handed "workflow
-- wf-123 went wrong" (or following the trace's Workflow link) sees every operation it claimed.
-- Partial, so claims without a workflow id (and the heartbeats and completes of any operation,
-- which never change the column) pay nothing for it. Only in SQL: Prisma's schema cannot declare
-- a partial index (the drift test ignores them).
CREATE INDEX "operation_tenant_id_workflow_id_idx" ON "operation" ("tenant_id", "workflow_id") WHERE "workflow_id" IS NOT NULL;
