import { randomBytes } from "node:crypto";
import type { Db } from "@/lib/db";
import { recordAudit } from "@/lib/audit/record-audit";
import { decryptSecret, encryptSecret } from "@/lib/crypto/secret-box";
import { ProblemError } from "@/lib/http/problem";
import { schemeToDb, webhookConnectionView, type WebhookConnectionRow } from "@/lib/webhooks/webhook-connection-view";
import type { WebhookConnectionRequest, WebhookConnectionView } from "@/lib/webhooks/webhook-schemas";

// The connection id is the endpoint URL's only secret part: 192 random bits, so nobody can
// find an endpoint by guessing (the signature is still what authenticates a delivery).
const newConnectionId = () => `whc_${randomBytes(24).toString("base64url")}`;

// Creates (201) or replaces (200) a webhook connection of the tenant in one upsert. Secrets are
// encrypted before they reach the database and never come back out of this module; a replace
// without `secrets` keeps the stored ones (so changing an outcome map does not mean re-sending
// secrets), while a replace with `secrets` rotates them.
export async function putWebhookConnection(options: {
  db: Db;
  tenantId: string;
  name: string;
  input: WebhookConnectionRequest;
  actor: string;
  origin: string;
  serverSecret?: string;
}): Promise<{ created: boolean; connection: WebhookConnectionView }> {
  const { db, tenantId, name, input, origin } = options;
  const secrets = input.secrets ? input.secrets.map((s) => encryptSecret(s, options.serverSecret)) : null;
  return db.$transaction(async (tx) => {
    const before = await tx.$queryRaw<WebhookConnectionRow[]>`
      SELECT * FROM webhook_connection WHERE tenant_id = ${tenantId} AND name = ${name} FOR UPDATE`;
    const previous = before[0];
    if (!secrets && (!previous || previous.scheme !== schemeToDb(input.scheme))) {
      const message = previous ? "changing the scheme needs the new scheme's secrets" : "required when the connection is created";
      throw new ProblemError("invalid-request", `secrets: ${message}`, { extras: { errors: [{ path: "secrets", message }] } });
    }
    // A PUT that changes nothing leaves the row, its version and the audit log alone. Every
    // version move makes deliveries in flight on other instances verify again, and two moves
    // close together turn one into a 503: a deploy script that PUTs its connections on every run
    // must not cost the provider retries.
    if (previous && sameConnection(previous, input, options.serverSecret)) {
      return { created: false, connection: webhookConnectionView(previous, origin) };
    }
    const rows = await tx.$queryRaw<(WebhookConnectionRow & { inserted: boolean })[]>`
      INSERT INTO webhook_connection (id, tenant_id, name, scheme, secrets_encrypted, tolerance_seconds, correlation_path, outcomes,
        payload_retention_days)
      VALUES (${newConnectionId()}, ${tenantId}, ${name}, ${schemeToDb(input.scheme)}::webhook_scheme, ${secrets ?? []}::text[],
        ${input.toleranceSeconds}, ${input.correlation.path}, ${JSON.stringify(input.outcomes)}::jsonb, ${input.payloadRetentionDays})
      ON CONFLICT (tenant_id, name) DO UPDATE SET
        scheme = EXCLUDED.scheme,
        secrets_encrypted = CASE WHEN ${secrets !== null} THEN EXCLUDED.secrets_encrypted ELSE webhook_connection.secrets_encrypted END,
        tolerance_seconds = EXCLUDED.tolerance_seconds, correlation_path = EXCLUDED.correlation_path, outcomes = EXCLUDED.outcomes,
        payload_retention_days = EXCLUDED.payload_retention_days,
        -- Every change moves the version: ingest compares it, so no instance verifies with stale secrets.
        updated_at = greatest(now(), webhook_connection.updated_at + interval '1 millisecond')
      RETURNING *, (xmax = 0) AS inserted`;
    const row = rows[0];
    if (!row) throw new Error("webhook connection upsert returned no row");
    const connection = webhookConnectionView(row, origin);
    await recordAudit(tx, {
      tenantId,
      actor: options.actor,
      action: row.inserted ? "webhook_connection.created" : "webhook_connection.replaced",
      targetType: "webhook_connection",
      targetId: name,
      before: previous ? webhookConnectionView(previous, origin) : null,
      after: { ...connection, secretsRotated: Boolean(previous && secrets) },
    });
    return { created: row.inserted, connection };
  });
}

function sameConnection(row: WebhookConnectionRow, input: WebhookConnectionRequest, serverSecret?: string): boolean {
  if (row.scheme !== schemeToDb(input.scheme) || row.tolerance_seconds !== input.toleranceSeconds) return false;
  if (row.correlation_path !== input.correlation.path || row.payload_retention_days !== input.payloadRetentionDays) return false;
  const stored = Object.entries(row.outcomes);
  if (stored.length !== Object.keys(input.outcomes).length || stored.some(([type, outcome]) => !Object.hasOwn(input.outcomes, type) || input.outcomes[type] !== outcome)) return false;
  if (!input.secrets) return true;
  // The same secrets sent again (encryption is randomised, so compare them decrypted); a stored
  // secret this server's key cannot open counts as changed.
  try {
    return input.secrets.length === row.secrets_encrypted.length && row.secrets_encrypted.every((box, i) => decryptSecret(box, serverSecret) === input.secrets?.[i]);
  } catch {
    return false;
  }
}
