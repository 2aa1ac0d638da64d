import { randomBytes } from "node:crypto";
import type { Db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto/digest";
import { hotQuery, type HotStatement } from "@/lib/db/hot-sql";
import { ProblemError } from "@/lib/http/problem";
import { metrics } from "@/lib/metrics/registry";
import { loadWebhookConnection, type IngestConnection } from "@/lib/webhooks/load-webhook-connection";
import { isStorableJson } from "@/lib/webhooks/storable-json";
import { jsonNestsDeeperThan, jsonTextHasUnstorableEscape, MAX_JSON_DEPTH } from "@/lib/http/json-limits";
import { describeJsonSyntaxError } from "@/lib/http/json-syntax-error";
import { verifySignature, type VerifyFailure } from "@/lib/webhooks/verify-signature";
import { webhookMetrics } from "@/lib/webhooks/webhook-metrics";
import { MAX_EVENT_TYPE_LENGTH, type WebhookIngestResponse } from "@/lib/webhooks/webhook-schemas";

export const connectionIdPattern = /^whc_[A-Za-z0-9_-]{32}$/;

type IngestAnswer = {
  code: "stored" | "duplicate" | "stale" | "not-found";
  eventId?: string;
  status?: string;
  operationId?: string | null;
  tenantId?: string;
  // A provider's "succeeded" stopped an operation's retry: it is unknown until an operator settles it.
  becameUnknown?: boolean;
  // Why, for the metrics: "webhook-contradicts-retry" (an attempt had reported failed, retryable) or
  // "webhook-before-run" (no attempt had run: an approved operation not yet claimed).
  unknownCause?: string | null;
};

// POST /api/v1/webhooks/{connectionId}: verify (raw bytes, constant time, any secret) →
// one SQL call that dedupes on (connection, provider event id) with INSERT … ON CONFLICT DO
// NOTHING and matches/settles the operation under its row lock. Nothing is stored unless the
// signature is good. Usually one round trip: the connection's secrets are cached per instance.
export async function ingestWebhook(options: {
  db: Db;
  connectionId: string;
  headers: Headers;
  body: Buffer;
  serverSecret?: string;
  annotate?: (fields: Record<string, string | null>) => void;
}): Promise<WebhookIngestResponse> {
  const { db, connectionId, headers, body } = options;
  const count = (result: string) => webhookMetrics().deliveries.inc({ result });
  if (!connectionIdPattern.test(connectionId)) return notFound(count);
  let connection = await loadWebhookConnection({ db, connectionId, serverSecret: options.serverSecret });
  if (!connection) return notFound(count);
  options.annotate?.({ tenantId: connection.tenantId, webhookConnection: connection.name });

  connection = await verified(connection, { db, headers, body, serverSecret: options.serverSecret, count });
  const { text, payload } = parsePayload(body, count);
  const identify = (c: IngestConnection): string => storableEventId(providerEventIdOf(c, headers, payload, body));
  let providerEventId = identify(connection);
  const eventType = typeof payload.type === "string" ? storedEventType(payload.type) : "";
  const eventId = `whe_${randomBytes(16).toString("base64url")}`;
  options.annotate?.({ webhookEventId: eventId, eventType });

  let answer = await callIngest(db, connection, eventId, providerEventId, eventType, text, count);
  if (answer.code === "stale") {
    // The connection changed since it was cached: verify again with what is stored now.
    const fresh = await loadWebhookConnection({ db, connectionId, fresh: true, serverSecret: options.serverSecret });
    if (!fresh) return notFound(count);
    connection = await verified(fresh, { db, headers, body, serverSecret: options.serverSecret, count, reload: false });
    // The scheme may have changed too, and with it what identifies the event.
    providerEventId = identify(connection);
    answer = await callIngest(db, connection, eventId, providerEventId, eventType, text, count);
  }
  if (answer.code === "not-found") return notFound(count);
  if (answer.code === "stale") {
    // Changed again between our two reads: nothing was stored; the provider's retry will land.
    count("stale");
    throw new ProblemError("service-unavailable", "The webhook connection is being changed; retry the delivery.", { headers: { "retry-after": "1" } });
  }
  if (answer.code === "duplicate") {
    count("duplicate");
    return { duplicate: true, eventId: answer.eventId ?? "" };
  }
  count(answer.status ?? "stored");
  if (answer.becameUnknown) metrics().unknowns.inc({ cause: answer.unknownCause === "webhook-before-run" ? "webhook-before-run" : "webhook-contradicts-retry" });
  options.annotate?.({ operationId: answer.operationId ?? null, webhookStatus: answer.status ?? null });
  return { duplicate: false, eventId, status: answer.status as Extract<WebhookIngestResponse, { duplicate: false }>["status"] };
}

async function verified(
  connection: IngestConnection,
  o: { db: Db; headers: Headers; body: Buffer; serverSecret?: string; count: (r: string) => void; reload?: boolean },
): Promise<IngestConnection> {
  const check = (c: IngestConnection) => verifySignature({ scheme: c.scheme, keys: c.keys, headers: o.headers, body: o.body, toleranceSeconds: c.toleranceSeconds });
  let result = check(connection);
  // The connection may have changed through another instance since this one cached it (a secret
  // rotated in, another scheme, a wider tolerance): a delivery that fails against the cached
  // connection, for any reason, is checked once more against a fresh read (a forged delivery thus
  // costs one primary-key read, never a write).
  if (!result.ok && o.reload !== false) {
    const fresh = await loadWebhookConnection({ db: o.db, connectionId: connection.id, fresh: true, serverSecret: o.serverSecret });
    if (fresh) {
      connection = fresh;
      result = check(fresh);
    }
  }
  if (!result.ok) {
    o.count(`invalid-signature:${result.failure}`);
    throw new ProblemError("invalid-signature", signatureDetail[result.failure]);
  }
  return connection;
}

const signatureDetail: Record<VerifyFailure, string> = {
  "missing-header": "The signature headers are missing or malformed.",
  "bad-timestamp": "The signature timestamp is not a Unix time in seconds.",
  "stale-timestamp": "The signature timestamp is outside the connection's tolerance.",
  "no-match": "The signature does not match the body with any of the connection's secrets.",
};

// What is stored (and looked up in the outcome map) as the event's type. A type longer than any
// outcome key (200 characters) is cut and marked with "…", which makes it 201 characters: it can
// never equal a key, so it is unmapped, as the whole type would be. (Cut to 200, it could equal
// a key its first 200 characters spell, and settle an operation the provider never said.) The cut
// never splits a surrogate pair.
export function storedEventType(type: string): string {
  if (type.length <= MAX_EVENT_TYPE_LENGTH) return type;
  const cut = type.slice(0, MAX_EVENT_TYPE_LENGTH);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

// The body decoded once (strictly: invalid UTF-8 is refused, never replaced) and parsed; the
// same text is what PostgreSQL stores.
function parsePayload(body: Buffer, count: (r: string) => void): { text: string; payload: Record<string, unknown> } {
  let value: unknown;
  let text: string;
  try {
    text = utf8.decode(body);
    value = JSON.parse(text);
  } catch (error) {
    count("invalid-payload");
    throw new ProblemError("invalid-json", `The verified body is not valid UTF-8 JSON: ${describeJsonSyntaxError(error)}.`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    count("invalid-payload");
    throw new ProblemError("invalid-request", "The event payload must be a JSON object.");
  }
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
    count("invalid-payload");
    throw new ProblemError("invalid-request", `The payload nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  if (!isStorableJson(value) || jsonTextHasUnstorableEscape(text)) {
    count("invalid-payload");
    throw new ProblemError("invalid-request", "The payload contains U+0000 or an unpaired surrogate, which cannot be stored.");
  }
  return { text, payload: value as Record<string, unknown> };
}

// Standard Webhooks: the signed webhook-id header. Stripe: the event's own id ("evt_…"); a
// payload without one is identified by its bytes, so an identical redelivery still dedupes.
// A verified event whose id is longer than the column holds is stored under a digest of it: a
// refusal would be permanent, and the provider would redeliver it for days. The digest dedupes
// redeliveries just as well.
function storableEventId(id: string): string {
  return id.length > 255 ? `id-sha256:${sha256Hex(id)}` : id;
}

function providerEventIdOf(connection: IngestConnection, headers: Headers, payload: Record<string, unknown>, body: Buffer): string {
  if (connection.scheme === "standard-webhooks") return headers.get("webhook-id") ?? "";
  if (typeof payload.id === "string" && payload.id) return payload.id;
  return `sha256:${sha256Hex(body)}`;
}

// The hot path's one statement, sent as a named prepared statement on Prisma's own pool (as
// claims and completes are: lib/db/hot-sql.ts).
const INGEST_SQL: HotStatement = {
  name: "tollgate_webhook_ingest",
  text: "SELECT tollgate_webhook_ingest($1::text, $2::timestamptz, $3::text, $4::text, $5::text, $6::jsonb) AS r",
};

async function callIngest(
  db: Db,
  c: IngestConnection,
  eventId: string,
  providerEventId: string,
  eventType: string,
  text: string,
  count: (r: string) => void,
): Promise<IngestAnswer> {
  // The payload goes to PostgreSQL as the text that was signed; jsonb parses it once there.
  const rows = await hotQuery<{ r: IngestAnswer }>(db, INGEST_SQL, [c.id, c.version.toISOString(), eventId, providerEventId, eventType, text]).catch(
    (error: unknown) => {
      // JSON.parse reads 1e200000 as Infinity and 0.(20,000 zeros)1 as 0 without complaint; jsonb
      // keeps numbers as numeric, which refuses them (22003): a bad payload, not a 500.
      if ((error as { code?: unknown }).code === "22003") {
        count("invalid-payload");
        throw new ProblemError("invalid-request", "The payload holds a number PostgreSQL cannot store (too large, or too many digits).");
      }
      throw error;
    },
  );
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_webhook_ingest returned nothing");
  return r;
}

function notFound(count: (r: string) => void): never {
  count("not-found");
  throw new ProblemError("webhook-connection-not-found", "No webhook connection has this endpoint.");
}
