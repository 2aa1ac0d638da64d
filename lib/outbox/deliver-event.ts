import { Webhook } from "standardwebhooks";
import type { Db } from "@/lib/db";
import { decryptSecret } from "@/lib/crypto/secret-box";
import type { GuardedFetch } from "@/lib/http/egress";
import { readTextUpTo } from "@/lib/http/read-body";
import type { DeliverySettings } from "@/lib/outbox/delivery-settings";
import type { RedeliverBlock } from "@/lib/outbox/list-deliveries";
import { describeFetchFailure } from "@/lib/http/fetch-failure";

type DeliveryRow = {
  state: "pending" | "delivered" | "dead";
  eventId: string;
  type: string;
  payload: unknown;
  createdAt: Date;
  url: string;
  secretBox: string;
  // Why the subscription as it stands must not be sent this event (tollgate_redeliver_block), or null.
  block: RedeliverBlock | null;
};

const ERROR_TEXT_BYTES = 4096;

export type DeliveryResult = "delivered" | "retry" | "dead" | "skipped";
// What a failed try was told (an HTTP status, or why nothing was sent), for the worker's log line:
// the console shows it on the delivery, but a terminal showed only "delivery retry" (newcomer review).
export type DeliveryOutcome = { result: DeliveryResult; status?: number | null; error?: string | null };

// One try of one delivery (the worker's "deliver-event" job): POST the event to the
// subscription's URL, signed with Standard Webhooks. The webhook-id is the outbox event's id, so
// every redelivery of the event carries the same one and the receiver can dedupe; the body is
// rebuilt byte for byte from the stored event. A 2xx marks it delivered; anything else (status,
// timeout, refused connection) is recorded by tollgate_delivery_failed, which schedules the next
// try in the same transaction, or marks the delivery dead past its retry window (which opens at
// the first try, failed or not). `fetch` is the worker's, with its egress policy (lib/http/egress.ts).
export async function deliverEvent(options: {
  db: Db;
  deliveryId: string;
  settings: DeliverySettings;
  serverSecret: string;
  fetch: GuardedFetch;
}): Promise<DeliveryOutcome> {
  const { db, deliveryId, settings } = options;
  const rows = await db.$queryRaw<DeliveryRow[]>`
    SELECT d.state::text AS state, e.id AS "eventId", e.type, e.payload, e.created_at AS "createdAt", s.url,
      s.secret_encrypted AS "secretBox", tollgate_redeliver_block(d, s, e.type) AS block
    FROM event_delivery d JOIN outbox_event e ON e.id = d.event_id JOIN event_subscription s ON s.id = d.subscription_id
    WHERE d.id = ${deliveryId}`;
  const row = rows[0];
  // Delivered (a duplicate job after a crash), dead, or pruned: nothing to do.
  if (!row || row.state !== "pending") return { result: "skipped" };
  // Every try asks what a redeliver asks: a subscription replaced since with other events, or
  // removed and put again under its name (a new endpoint, which never asked for this event) is not
  // sent it, however long ago the delivery was queued (review, 2026-12-03: a retry due in two hours
  // went to the replacement's URL). The removal itself ends pending deliveries; this also covers one
  // written by a transaction the removal could not see yet.
  if (row.block) {
    const why = blockedBecause(row.block, row.type);
    await db.$executeRaw`
      UPDATE event_delivery SET state = 'dead', dead_at = now(), next_attempt_at = NULL, last_error = ${why}
      WHERE id = ${deliveryId} AND state = 'pending'`;
    return { result: "dead", error: why };
  }

  const body = eventBody(row);
  const signer = subscriptionSigner(row.secretBox, options.serverSecret);
  const outcome = signer
    ? await post(options.fetch, signer, row, body, settings.timeoutMs)
    : { ok: false as const, status: null, error: UNSIGNABLE };
  if (outcome.ok) {
    await db.$executeRaw`
      UPDATE event_delivery SET state = 'delivered', attempts = attempts + 1, last_attempt_at = now(), last_status = ${outcome.status},
        last_error = NULL, delivered_at = now(), next_attempt_at = NULL, window_started_at = coalesce(window_started_at, now())
      WHERE id = ${deliveryId} AND state = 'pending'`;
    return { result: "delivered", status: outcome.status };
  }
  const failed = await db.$queryRaw<{ r: { code: string } }[]>`
    SELECT tollgate_delivery_failed(${deliveryId}, ${outcome.status}::int, ${outcome.error}, ${Math.round(settings.baseMs)}::int,
      ${Math.round(settings.capMs)}::int, ${Math.round(settings.windowSeconds)}::int) AS r`;
  const code = failed[0]?.r.code;
  return { result: code === "dead" ? "dead" : code === "retry" ? "retry" : "skipped", status: outcome.status, error: outcome.error };
}

// The delivery's last_error when its subscription no longer wants it; a person reads it in the console.
function blockedBecause(block: RedeliverBlock, type: string): string {
  switch (block) {
    case "subscription-removed":
      return "the subscription was removed";
    case "earlier-subscription":
      return "made for an earlier subscription of this name, since removed; the one now under the name never asked for it";
    case "not-subscribed":
      return `the subscription no longer subscribes to ${type}`;
  }
}

// The Standard Webhooks envelope; `timestamp` is when the event happened, the same on every try.
export function eventBody(row: { type: string; payload: unknown; createdAt: Date }): string {
  return JSON.stringify({ type: row.type, timestamp: row.createdAt.toISOString(), data: row.payload });
}

const UNSIGNABLE = "cannot open the subscription's signing secret: was TOLLGATE_SECRET_KEY changed?";

// The subscription's signer, or null when its stored secret cannot be opened (sealed under
// another TOLLGATE_SECRET_KEY, or damaged). Such a try is a failed one, recorded and retried like
// a 500: thrown from the job instead, graphile-worker would retry it with nothing on the delivery,
// its attempts never counted and never dead. Retrying can help, so it is not dead at once:
// restoring the key, or rotating the secret (PUT with rotateSecret), mends the next try. The
// decryption error is dropped, so nothing of the box or the secret reaches the log or the row.
function subscriptionSigner(secretBox: string, serverSecret: string): Webhook | null {
  try {
    return new Webhook(decryptSecret(secretBox, serverSecret));
  } catch {
    return null;
  }
}

async function post(
  fetch: GuardedFetch,
  signer: Webhook,
  row: DeliveryRow,
  body: string,
  timeoutMs: number,
): Promise<{ ok: true; status: number } | { ok: false; status: number | null; error: string }> {
  const now = new Date();
  const signature = signer.sign(row.eventId, now, body);
  try {
    const res = await fetch(row.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Tollgate-Webhooks/1",
        "webhook-id": row.eventId,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body,
      // No redirect is followed (guardedFetch): a redirect is not a delivery, the receiver must answer 2xx itself.
      signal: AbortSignal.timeout(timeoutMs),
    });
    // Only the start of the answer is kept (on the delivery's error); a receiver cannot make the worker buffer more.
    const text = await readTextUpTo(res.body, ERROR_TEXT_BYTES).catch(() => "");
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    return { ok: false, status: res.status, error: `HTTP ${res.status}${text ? `: ${text.slice(0, 300)}` : ""}` };
  } catch (error) {
    // "fetch failed" alone said nothing (console review): the cause, in fixed words.
    return { ok: false, status: null, error: describeFetchFailure(error, timeoutMs) };
  }
}
