-- Puts back the operation indexes migration 20261130180001 replaced: the unique index in the
-- scope's order (tenant_id, principal, tool, key_digest) and the separate (tenant_id, key_digest)
-- index for the console's search. `npm run bench -- floor-ab --sql bench/sql/key-digest-index-as-before.sql`
-- measures that migration in reverse ("after" is the old schema).
CREATE UNIQUE INDEX "operation_tenant_id_principal_tool_key_digest_key" ON "operation"("tenant_id", "principal", "tool", "key_digest");
CREATE INDEX "operation_tenant_id_key_digest_idx" ON "operation"("tenant_id", "key_digest");
DROP INDEX "operation_tenant_id_key_digest_principal_tool_key";
