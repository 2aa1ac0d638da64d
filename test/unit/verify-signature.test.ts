import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { hmacKey, verifySignature } from "@/lib/webhooks/verify-signature";

// The signature checks alone, against signatures the real libraries make: several signatures in
// one header (providers send old and new during their own rotation), several secrets on our
// side, and the edges of the tolerance. The API tests cover the same through HTTP.

const stripe = new Stripe("sk_test_unit");
const standardSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const now = 1_800_000_000;

function standardHeaders(secret: string, body: string, at = now, id = "msg_1"): Headers {
  return new Headers({ "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": new Webhook(secret).sign(id, new Date(at * 1000), body) });
}

describe("Standard Webhooks", () => {
  const body = '{"type":"ticket.created"}';

  it("accepts a header with several signatures when any one matches, and any of several secrets", () => {
    const ours = standardSecret();
    const other = standardSecret();
    const good = standardHeaders(ours, body).get("webhook-signature")!;
    const bad = standardHeaders(other, body).get("webhook-signature")!;
    const headers = new Headers({ "webhook-id": "msg_1", "webhook-timestamp": String(now), "webhook-signature": `${bad} v1a,ignored ${good}` });
    const keys = [hmacKey("standard-webhooks", other.replace(/.$/, "A")), hmacKey("standard-webhooks", ours)];
    expect(verifySignature({ scheme: "standard-webhooks", keys, headers, body: Buffer.from(body), toleranceSeconds: 300, nowSeconds: now })).toEqual({ ok: true });
  });

  it.each([
    { what: "exactly at the tolerance", at: now - 300, ok: true },
    { what: "one second past it", at: now - 301, ok: false },
    { what: "one second into the future past it", at: now + 301, ok: false },
  ])("timestamp $what", ({ at, ok }) => {
    const secret = standardSecret();
    const result = verifySignature({ scheme: "standard-webhooks", keys: [hmacKey("standard-webhooks", secret)], headers: standardHeaders(secret, body, at), body: Buffer.from(body), toleranceSeconds: 300, nowSeconds: now });
    expect(result.ok).toBe(ok);
  });

  it("refuses a signature over the same text decoded differently: two invalid UTF-8 bytes are not the same byte", () => {
    const secret = standardSecret();
    const signed = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const altered = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xfe]), Buffer.from('"}')]);
    const keys = [hmacKey("standard-webhooks", secret)];
    const headers = new Headers({ "webhook-id": "msg_1", "webhook-timestamp": String(now) });
    // Sign the raw bytes the way a byte-exact provider does (the library would decode them first).
    const sig = createHmac("sha256", keys[0]!).update(`msg_1.${now}.`).update(signed).digest("base64");
    headers.set("webhook-signature", `v1,${sig}`);
    expect(verifySignature({ scheme: "standard-webhooks", keys, headers, body: signed, toleranceSeconds: 300, nowSeconds: now }).ok).toBe(true);
    expect(verifySignature({ scheme: "standard-webhooks", keys, headers, body: altered, toleranceSeconds: 300, nowSeconds: now })).toEqual({ ok: false, failure: "no-match" });
  });
});

describe("Stripe", () => {
  const body = '{"id":"evt_1","type":"charge.succeeded"}';

  it("accepts Stripe's header, with either of two secrets, and refuses it with neither", () => {
    const a = `whsec_${randomBytes(24).toString("hex")}`;
    const b = `whsec_${randomBytes(24).toString("hex")}`;
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: b, timestamp: now });
    const check = (secrets: string[]) =>
      verifySignature({ scheme: "stripe", keys: secrets.map((s) => hmacKey("stripe", s)), headers: new Headers({ "stripe-signature": header }), body: Buffer.from(body), toleranceSeconds: 300, nowSeconds: now });
    expect(check([a, b])).toEqual({ ok: true });
    expect(check([a])).toEqual({ ok: false, failure: "no-match" });
  });

  it.each([
    { what: "no t=", header: "v1=" + "a".repeat(64), failure: "missing-header" },
    { what: "no v1=", header: `t=${now},v0=abc`, failure: "missing-header" },
    { what: "a v1 that is not 64 hex digits", header: `t=${now},v1=xyz`, failure: "missing-header" },
    { what: "t= not a number", header: `t=12x,v1=${"a".repeat(64)}`, failure: "bad-timestamp" },
    { what: "t= too old", header: `t=${now - 400},v1=${"a".repeat(64)}`, failure: "stale-timestamp" },
  ])("refuses a header with $what", ({ header, failure }) => {
    const result = verifySignature({ scheme: "stripe", keys: [hmacKey("stripe", "whsec_x")], headers: new Headers({ "stripe-signature": header }), body: Buffer.from(body), toleranceSeconds: 300, nowSeconds: now });
    expect(result).toEqual({ ok: false, failure });
  });
});
