import { createHmac, timingSafeEqual } from "node:crypto";
import type { WebhookScheme } from "@/lib/webhooks/webhook-schemas";

// Signature checks for both schemes, over the raw body bytes exactly as they arrived (never a
// re-serialised or re-decoded string), in constant time, against every secret of the
// connection (rotation: old and new are accepted together).
//
// Why not the `standardwebhooks` library's Webhook.verify: its timestamp tolerance is fixed at
// 300 s (a connection's is configurable), it turns a Buffer body into a UTF-8 string before
// signing (two different invalid bytes both decode to U+FFFD and would verify alike), and it
// checks one secret per instance. The tests sign with that library, so interoperability is
// proven. Why not the `stripe` SDK's constructEvent: a whole API client in production for 30
// lines of HMAC; the tests sign with its own generateTestHeaderString instead.

export type VerifyFailure = "missing-header" | "bad-timestamp" | "stale-timestamp" | "no-match";
export type VerifyResult = { ok: true } | { ok: false; failure: VerifyFailure };

export type VerifyInput = {
  scheme: WebhookScheme;
  // HMAC keys, one per accepted secret (see hmacKey).
  keys: Buffer[];
  headers: Headers;
  body: Buffer;
  toleranceSeconds: number;
  nowSeconds?: number;
};

// Standard Webhooks keys are the base64 after "whsec_"; Stripe uses its secret string as is.
export function hmacKey(scheme: WebhookScheme, secret: string): Buffer {
  return scheme === "standard-webhooks" ? Buffer.from(secret.replace(/^whsec_/, ""), "base64") : Buffer.from(secret, "utf8");
}

export function verifySignature(input: VerifyInput): VerifyResult {
  return input.scheme === "stripe" ? verifyStripe(input) : verifyStandard(input);
}

const timestampPattern = /^\d{1,15}$/;

function checkTimestamp(raw: string, input: VerifyInput): VerifyResult {
  if (!timestampPattern.test(raw)) return { ok: false, failure: "bad-timestamp" };
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  // Both ways: a timestamp from the future is as suspect as an old one (replayed or forged).
  if (Math.abs(now - Number(raw)) > input.toleranceSeconds) return { ok: false, failure: "stale-timestamp" };
  return { ok: true };
}

function hmac(key: Buffer, prefix: string, body: Buffer): Buffer {
  return createHmac("sha256", key).update(prefix, "utf8").update(body).digest();
}

// True when any given signature equals any expected one. Every pair is compared (no early
// exit) and each comparison is constant-time over the 32 bytes; only a signature's length,
// which the sender chose, decides whether bytes are compared at all.
function anyEqual(given: Buffer[], expected: Buffer[]): boolean {
  let found = false;
  for (const g of given) {
    for (const e of expected) {
      const same = g.length === e.length && timingSafeEqual(g, e);
      found = found || same;
    }
  }
  return found;
}

// Headers webhook-id, webhook-timestamp, webhook-signature ("v1,<base64> v1,<base64>…");
// signed content "<id>.<timestamp>.<body>", HMAC-SHA256, base64.
function verifyStandard(input: VerifyInput): VerifyResult {
  const id = input.headers.get("webhook-id");
  const timestamp = input.headers.get("webhook-timestamp");
  const signature = input.headers.get("webhook-signature");
  if (!id || !timestamp || !signature) return { ok: false, failure: "missing-header" };
  const time = checkTimestamp(timestamp, input);
  if (!time.ok) return time;
  const given = signature
    .split(" ")
    .map((part) => part.split(","))
    .filter(([version, sig]) => version === "v1" && sig)
    .map(([, sig]) => Buffer.from(sig ?? "", "base64"));
  const expected = input.keys.map((key) => hmac(key, `${id}.${timestamp}.`, input.body));
  return anyEqual(given, expected) ? { ok: true } : { ok: false, failure: "no-match" };
}

// Header Stripe-Signature "t=<timestamp>,v1=<hex>[,v1=<hex>…][,v0=…]"; signed content
// "<timestamp>.<body>", HMAC-SHA256, hex. Only v1 counts (v0 is Stripe's test-mode legacy).
function verifyStripe(input: VerifyInput): VerifyResult {
  const header = input.headers.get("stripe-signature");
  if (!header) return { ok: false, failure: "missing-header" };
  const pairs = header.split(",").map((p) => [p.slice(0, p.indexOf("=")).trim(), p.slice(p.indexOf("=") + 1).trim()] as const);
  const timestamp = pairs.find(([k]) => k === "t")?.[1];
  const given = pairs.filter(([k, v]) => k === "v1" && /^[0-9a-f]{64}$/i.test(v)).map(([, v]) => Buffer.from(v, "hex"));
  if (!timestamp || given.length === 0) return { ok: false, failure: "missing-header" };
  const time = checkTimestamp(timestamp, input);
  if (!time.ok) return time;
  const expected = input.keys.map((key) => hmac(key, `${timestamp}.`, input.body));
  return anyEqual(given, expected) ? { ok: true } : { ok: false, failure: "no-match" };
}
