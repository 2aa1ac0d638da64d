import type { Db } from "@/lib/db";
import { decryptSecret } from "@/lib/crypto/secret-box";
import { log } from "@/lib/log";
import { hmacKey } from "@/lib/webhooks/verify-signature";
import { schemeFromDb } from "@/lib/webhooks/webhook-connection-view";
import type { WebhookScheme } from "@/lib/webhooks/webhook-schemas";

// What ingest needs to verify a delivery, decrypted once and kept per instance. The cache can
// never make a stale answer stick: ingest's SQL compares `version` with the row's updated_at
// and answers "stale" when the connection changed, and a signature that matches no cached
// secret is checked again against a fresh read before it is refused (a secret rotated in on
// another instance).
export type IngestConnection = {
  id: string;
  tenantId: string;
  name: string;
  scheme: WebhookScheme;
  keys: Buffer[];
  toleranceSeconds: number;
  version: Date;
  loadedAt: number;
};

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
const globalForCache = globalThis as unknown as { tollgateWebhookConnections?: Map<string, IngestConnection> };
const cache = (globalForCache.tollgateWebhookConnections ??= new Map());

type Row = { id: string; tenant_id: string; name: string; scheme: "standard_webhooks" | "stripe"; secrets_encrypted: string[]; tolerance_seconds: number; updated_at: Date };

export async function loadWebhookConnection(options: { db: Db; connectionId: string; fresh?: boolean; serverSecret?: string }): Promise<IngestConnection | null> {
  const cached = cache.get(options.connectionId);
  if (cached && !options.fresh && Date.now() - cached.loadedAt < TTL_MS) return cached;
  const rows = await options.db.$queryRaw<Row[]>`
    SELECT id, tenant_id, name, scheme::text AS scheme, secrets_encrypted, tolerance_seconds, updated_at
    FROM webhook_connection WHERE id = ${options.connectionId}`;
  const row = rows[0];
  if (!row) {
    cache.delete(options.connectionId);
    return null;
  }
  const scheme = schemeFromDb(row.scheme);
  const connection: IngestConnection = {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    scheme,
    keys: row.secrets_encrypted.flatMap((box) => {
      try {
        return [hmacKey(scheme, decryptSecret(box, options.serverSecret))];
      } catch {
        // Encrypted under another TOLLGATE_SECRET_KEY: that secret cannot verify anything (the
        // delivery gets 400, not a 500); the log says what to do.
        log().error({ webhookConnection: row.name, connectionId: row.id }, "a webhook secret cannot be decrypted with TOLLGATE_SECRET_KEY; PUT the connection's secrets again");
        return [];
      }
    }),
    toleranceSeconds: row.tolerance_seconds,
    version: row.updated_at,
    loadedAt: Date.now(),
  };
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(row.id, connection);
  return connection;
}
