import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDeliveries } from "@/lib/outbox/list-deliveries";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// The console's delivery list reads the operation's id out of each event's payload in SQL (the
// payload, up to 256 KiB, stays in the database: up to 100 of them were fetched per page view
// for one id each). It must find exactly what the JavaScript it replaced found: the payload's
// operation.operationId ?? approval.operationId ?? webhookEvent.operationId, kept only when a string.

let app: TestApp;
let keys: TenantKeys;

beforeAll(async () => {
  app = await startTestApp();
  keys = await seedTenant(app.db, "delivery-list");
});
afterAll(async () => {
  await app?.stop();
});

// The former reading, verbatim (lib/outbox/list-deliveries.ts before 2026-12-02).
function operationIdOf(payload: unknown): string | null {
  const p = payload as { operation?: { operationId?: unknown }; approval?: { operationId?: unknown }; webhookEvent?: { operationId?: unknown } } | null;
  const id = p?.operation?.operationId ?? p?.approval?.operationId ?? p?.webhookEvent?.operationId;
  return typeof id === "string" ? id : null;
}

describe("listDeliveries", () => {
  it("finds each event's operation id as the JavaScript reading did, whatever the payload's shape", async () => {
    const payloads: unknown[] = [
      { operation: { operationId: "op_a", state: "succeeded" }, previousState: "processing" },
      { approval: { id: "apr_1", operationId: "op_b" }, operation: { operationId: "op_c" } },
      { approval: { id: "apr_2", operationId: "op_d" } },
      { webhookEvent: { id: "whe_1", operationId: "op_e" } },
      { webhookEvent: { id: "whe_2", operationId: null } },
      { operation: { operationId: null }, approval: { operationId: "op_f" } },
      { operation: { operationId: 42 }, approval: { operationId: "op_g" } },
      { operation: { operationId: { nested: "op_h" } } },
      { operation: { operationId: ["op_i"] } },
      { operation: "op_j", approval: { operationId: "op_k" } },
      { operation: ["op_l"], webhookEvent: { operationId: "op_m" } },
      { operation: { operationId: "" } },
      { operation: { operationId: "op \"quoted\" ü \\ \u2028" } },
      { operation: { operationId: true } },
      {},
      [],
      "a string",
      7,
      null,
    ];
    const subscriptionId = `sub_${randomUUID()}`;
    await app.db.$executeRaw`
      INSERT INTO event_subscription (id, tenant_id, name, url, events, secret_encrypted)
      VALUES (${subscriptionId}, ${keys.tenantId}, 'shapes', 'https://x.example.com/hook', '{operation.succeeded}', 'x')`;
    const expected = new Map<string, string | null>();
    for (const [i, payload] of payloads.entries()) {
      const eventId = `msg_${randomUUID().replaceAll("-", "")}`;
      const deliveryId = `dlv_${i}_${randomUUID().replaceAll("-", "")}`;
      await app.db.$executeRaw`INSERT INTO outbox_event (id, tenant_id, type, payload) VALUES (${eventId}, ${keys.tenantId}, 'operation.succeeded', ${JSON.stringify(payload)}::jsonb)`;
      await app.db.$executeRaw`
        INSERT INTO event_delivery (id, tenant_id, event_id, subscription_id, state, dead_at) VALUES (${deliveryId}, ${keys.tenantId}, ${eventId}, ${subscriptionId}, 'dead', now())`;
      expected.set(deliveryId, operationIdOf(payload));
    }
    // What the JavaScript reading gets from the stored payloads (as PostgreSQL gives them back).
    const stored = await app.db.eventDelivery.findMany({ where: { subscriptionId }, include: { event: { select: { payload: true } } } });
    expect(new Map(stored.map((d) => [d.id, operationIdOf(d.event.payload)]))).toEqual(expected);

    const listed = await listDeliveries({ db: app.db, tenantId: keys.tenantId, subscription: "shapes", limit: 100 });
    expect(new Map(listed.map((d) => [d.id, d.operationId]))).toEqual(expected);
    expect(listed.every((d) => d.type === "operation.succeeded" && d.subscription === "shapes" && d.state === "dead" && d.deadAt instanceof Date)).toBe(true);
    expect(await listDeliveries({ db: app.db, tenantId: keys.tenantId, state: "pending", subscription: "shapes" })).toEqual([]);
    expect(await listDeliveries({ db: app.db, tenantId: keys.tenantId, subscription: "no-such-one" })).toEqual([]);
    expect(await listDeliveries({ db: app.db, tenantId: keys.tenantId, state: "dead", limit: 3 })).toHaveLength(3);
  });
});
