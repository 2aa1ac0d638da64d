-- One index for the idempotency scope and the console's search by key digest: the unique index
-- leads with (tenant_id, key_digest), so it also answers "this digest (or prefix) in this tenant,
-- any principal or tool", and the separate (tenant_id, key_digest) index goes. Every claim wrote
-- both; the digest is random, so each was an insert on a random leaf page. tollgate_claim's
-- ON CONFLICT (tenant_id, principal, tool, key_digest) infers a unique index by its set of
-- columns, whatever their order. The new index exists before the old one goes.

-- CreateIndex
CREATE UNIQUE INDEX "operation_tenant_id_key_digest_principal_tool_key" ON "operation"("tenant_id", "key_digest", "principal", "tool");

-- DropIndex
DROP INDEX "operation_tenant_id_principal_tool_key_digest_key";

-- DropIndex
DROP INDEX "operation_tenant_id_key_digest_idx";
