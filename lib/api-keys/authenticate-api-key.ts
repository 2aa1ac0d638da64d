import type { Db } from "@/lib/db";
import { hashApiKeySecret } from "@/lib/api-keys/api-key-secret";
import { safeEqual } from "@/lib/crypto/digest";

export type ApiKeyRole = "agent" | "approver" | "admin";

export type AuthenticatedKey = {
  id: string;
  tenantId: string;
  tenantSlug: string;
  principal: string;
  role: ApiKeyRole;
  // Empty: every tool of the tenant.
  tools: string[];
};

type Row = { id: string; tenant_id: string; slug: string; hash: string; principal: string; role: ApiKeyRole; tools: string[] };

// A short per-instance cache keeps the hot path at one SQL statement per request. It is
// safe because every state-changing hot-path statement re-checks `revoked_at IS NULL`
// in the same statement; a revoked key can at most read for `cacheSeconds` more.
const cache = new Map<string, { key: AuthenticatedKey; until: number }>();
const MAX_CACHED = 10_000;

export async function authenticateApiKey(options: {
  db: Db;
  secret: string;
  cacheSeconds: number;
  now?: number;
}): Promise<AuthenticatedKey | null> {
  const hash = hashApiKeySecret(options.secret);
  const now = options.now ?? Date.now();
  // Only hot-path callers (cacheSeconds > 0) may use the cache: their SQL re-checks
  // revocation. Every other route asks the database, so a revoked key stops at once.
  const hit = options.cacheSeconds > 0 ? cache.get(hash) : undefined;
  if (hit && hit.until > now) return hit.key;

  // One statement: find the live key and note its use at most once a minute, so a busy
  // key does not turn every request into a write.
  const rows = await options.db.$queryRaw<Row[]>`
    WITH k AS (
      SELECT k.id, k.tenant_id, t.slug, k.hash, k.principal, k.role, k.tools
      FROM api_key k JOIN tenant t ON t.id = k.tenant_id
      WHERE k.hash = ${hash} AND k.revoked_at IS NULL
    ), touched AS (
      UPDATE api_key SET last_used_at = now()
      WHERE id IN (SELECT id FROM k) AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')
    )
    SELECT id, tenant_id, slug, hash, principal, role::text AS role, tools FROM k`;
  const row = rows[0];
  if (!row || !safeEqual(row.hash, hash)) {
    cache.delete(hash);
    return null;
  }
  const key: AuthenticatedKey = {
    id: row.id,
    tenantId: row.tenant_id,
    tenantSlug: row.slug,
    principal: row.principal,
    role: row.role,
    tools: row.tools,
  };
  if (options.cacheSeconds > 0) {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(hash, { key, until: now + options.cacheSeconds * 1000 });
  }
  return key;
}

export function forgetCachedApiKeys(): void {
  cache.clear();
}
