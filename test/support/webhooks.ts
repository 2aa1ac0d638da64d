import { randomBytes, randomUUID } from "node:crypto";
import { expect } from "vitest";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { call, type Reply } from "./http";

// Signing as real providers do: Standard Webhooks with the `standardwebhooks` library's own
// Webhook.sign, Stripe with the `stripe` library's webhooks.generateTestHeaderString. Nothing
// here computes an HMAC by hand, so the server is tested against the libraries, not itself.

const stripe = new Stripe("sk_test_tollgate_tests_never_call_stripe");

export const newStandardSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
export const newStripeSecret = () => `whsec_${randomBytes(24).toString("hex")}`;
export const nowSeconds = () => Math.floor(Date.now() / 1000);

export type Signed = { body: string | Buffer; headers: Record<string, string> };

export function signStandard(secret: string, payload: unknown, options: { id?: string; at?: number } = {}): Signed & { id: string } {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const id = options.id ?? `msg_${randomUUID()}`;
  const at = options.at ?? nowSeconds();
  const signature = new Webhook(secret).sign(id, new Date(at * 1000), body);
  return {
    id,
    body,
    headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signature },
  };
}

export function signStripe(secret: string, payload: unknown, options: { at?: number } = {}): Signed {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: options.at ?? nowSeconds() });
  return { body, headers: { "content-type": "application/json", "stripe-signature": header } };
}

export function deliver(baseUrl: string, connectionId: string, signed: Signed): Promise<Reply> {
  return call(baseUrl, "POST", `/api/v1/webhooks/${connectionId}`, {
    rawBody: typeof signed.body === "string" ? signed.body : new Uint8Array(signed.body),
    headers: signed.headers,
  });
}

export type ConnectionSpec = {
  scheme: "standard-webhooks" | "stripe";
  secrets?: string[];
  toleranceSeconds?: number;
  correlation?: { path: string };
  outcomes?: Record<string, "succeeded" | "failed">;
  payloadRetentionDays?: number;
};

// The tickets provider the tests talk to: ticket.created settles as succeeded, ticket.rejected as failed.
export const ticketOutcomes = { "ticket.created": "succeeded", "ticket.rejected": "failed" } as const;

export async function putConnection(baseUrl: string, adminKey: string, name: string, spec: ConnectionSpec): Promise<Reply> {
  return call(baseUrl, "PUT", `/api/v1/webhook-connections/${name}`, {
    key: adminKey,
    body: { correlation: { path: "data.metadata.tollgate_operation" }, outcomes: ticketOutcomes, ...spec },
  });
}

export async function createConnection(baseUrl: string, adminKey: string, name: string, spec: ConnectionSpec): Promise<{ connectionId: string; endpointUrl: string }> {
  const res = await putConnection(baseUrl, adminKey, name, spec);
  expect(res.status, res.text).toBe(201);
  return { connectionId: res.body.connectionId, endpointUrl: res.body.endpointUrl };
}

// A Standard Webhooks style event naming an operation (by id or downstream key) in its metadata.
export function ticketEvent(type: string, correlation: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type,
    timestamp: new Date().toISOString(),
    data: { ticket: { id: `T-${randomUUID().slice(0, 8)}` }, metadata: correlation === null ? {} : { tollgate_operation: correlation }, ...extra },
  };
}
