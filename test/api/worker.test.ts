import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encryptSecret } from "@/lib/crypto/secret-box";
import { redeliver } from "@/lib/outbox/redeliver";
import { call, claim, type Reply } from "../support/http";
import { startEventReceiver, type EventReceiver } from "../support/event-receiver";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { startWorkerProcess, type WorkerProcess } from "../support/worker-process";
import { waitFor } from "../support/wait-for";

// The worker (`npm run worker`, a real child process) delivering the outbox: Standard Webhooks
// signatures, one webhook-id per event on every try, backoff and the dead state (the retry window
// counted from the first try), a subscription secret the worker cannot open, the operator's
// redeliver, the lease reaper emitting operation.unknown with no agent around, and a graceful
// stop on SIGTERM that lets the delivery in flight finish. Intervals are shrunk by CLI flags.

let app: TestApp;
let worker: WorkerProcess;
const receivers: EventReceiver[] = [];

beforeAll(async () => {
  app = await startTestApp();
  worker = await startWorkerProcess(app.url);
});
afterAll(async () => {
  await worker?.stop();
  for (const r of receivers) await r.stop();
  await app?.stop();
});

let n = 0;
// A tenant of its own for each test, with one subscription to a fresh receiver.
async function setup(events: string[]): Promise<{ keys: TenantKeys; receiver: EventReceiver; secret: string; tool: (policy?: object) => Promise<string> }> {
  const keys = await seedTenant(app.db, `w${++n}`);
  const receiver = await startEventReceiver();
  receivers.push(receiver);
  const sub = await call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/feed", { key: keys.admin, body: { url: receiver.url, events } });
  expect(sub.status, sub.text).toBe(201);
  let t = 0;
  const tool = async (policy: object = {}) => {
    const name = `w.tool-${++t}`;
    const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy } });
    expect(res.status, res.text).toBe(201);
    return name;
  };
  return { keys, receiver, secret: sub.body.secret, tool };
}

async function claimAndComplete(keys: TenantKeys, tool: string, body: Record<string, unknown>): Promise<string> {
  const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool, args: { x: 1 } });
  expect(c.status, c.text).toBe(201);
  const done: Reply = await call(app.baseUrl, "POST", `/api/v1/operations/${c.body.operationId}/complete`, {
    key: keys.agent,
    body: { fencingToken: c.body.attempt.fencingToken, ...body },
  });
  expect(done.status, done.text).toBe(200);
  return c.body.operationId;
}

const deliveriesOf = (tenantId: string) => app.db.eventDelivery.findMany({ where: { tenantId }, include: { event: true }, orderBy: { createdAt: "asc" } });

describe("delivery", () => {
  it("posts the event signed with Standard Webhooks; webhook-id is the outbox event id; delivered after one try", async () => {
    const { keys, receiver, secret, tool } = await setup(["operation.succeeded"]);
    const operationId = await claimAndComplete(keys, await tool(), { outcome: "succeeded", result: { statusCode: 201, resourceId: "T-1" } });

    const [got] = await waitFor("the delivery", () => (receiver.received().length ? receiver.received() : null));

    const [delivery] = await deliveriesOf(keys.tenantId);
    expect(got!.webhookId).toBe(delivery!.eventId);
    expect(receiver.verify(got!, secret)).toBe(true);
    expect(receiver.verify(got!, "whsec_" + Buffer.alloc(32, 1).toString("base64"))).toBe(false);
    expect(got!.body).toEqual({
      type: "operation.succeeded",
      timestamp: delivery!.event.createdAt.toISOString(),
      data: expect.objectContaining({ operation: expect.objectContaining({ operationId, state: "succeeded" }) }),
    });
    await waitFor("delivered state", async () => (await deliveriesOf(keys.tenantId))[0]?.state === "delivered");
    expect((await deliveriesOf(keys.tenantId))[0]).toMatchObject({ state: "delivered", attempts: 1, lastStatus: 200, lastError: null, nextAttemptAt: null });
    expect(receiver.received()).toHaveLength(1);
  });

  it("retries failures with growing, jittered delays, always with the same webhook-id and body, until a 2xx", async () => {
    const { keys, receiver, secret, tool } = await setup(["operation.failed"]);
    receiver.answer((_r, count) => (count <= 3 ? 503 : 200));
    await claimAndComplete(keys, await tool(), { outcome: "failed", error: { code: "declined", message: "no" } });

    await waitFor("delivered after retries", async () => (await deliveriesOf(keys.tenantId))[0]?.state === "delivered");

    const got = receiver.received();
    expect(got).toHaveLength(4);
    expect(new Set(got.map((g) => g.webhookId)).size).toBe(1);
    expect(new Set(got.map((g) => g.raw)).size).toBe(1);
    expect(got.every((g) => receiver.verify(g, secret))).toBe(true);
    // Equal jitter: try n waits between half and all of 200 ms · 2^(n-1), so never less than 100, 200, 400 ms.
    const gaps = got.slice(1).map((g, i) => g.at - got[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[1]).toBeGreaterThanOrEqual(190);
    expect(gaps[2]).toBeGreaterThanOrEqual(390);
    expect((await deliveriesOf(keys.tenantId))[0]).toMatchObject({ attempts: 4, lastStatus: 200, state: "delivered" });
  });

  it("gives up after the retry window (dead, with the last error); an operator's redeliver sends it again with the same id", async () => {
    const { keys, receiver, tool } = await setup(["operation.failed"]);
    receiver.answer(() => 500);
    await claimAndComplete(keys, await tool(), { outcome: "failed" });

    await waitFor("dead", async () => (await deliveriesOf(keys.tenantId))[0]?.state === "dead", 30_000);
    const dead = (await deliveriesOf(keys.tenantId))[0]!;
    expect(dead).toMatchObject({ state: "dead", lastStatus: 500, nextAttemptAt: null });
    expect(dead.lastError).toMatch(/^HTTP 500/);
    expect(dead.deadAt).not.toBeNull();
    const tries = receiver.received().length;
    expect(tries).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.received()).toHaveLength(tries);

    receiver.answer(() => 204);
    await redeliver({ db: app.db, tenantId: keys.tenantId, deliveryId: dead.id, actor: "user:ops@example.com" });
    await waitFor("redelivered", async () => (await deliveriesOf(keys.tenantId))[0]?.state === "delivered");
    const got = receiver.received();
    expect(got).toHaveLength(tries + 1);
    expect(got.at(-1)!.webhookId).toBe(dead.eventId);
    expect(got.at(-1)!.raw).toBe(got[0]!.raw);
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { tenantId: keys.tenantId, action: "event_delivery.redelivered" } });
    expect(audit).toMatchObject({ actor: "user:ops@example.com", targetType: "event_delivery", targetId: dead.id, before: { state: "dead" } });
    // Another tenant cannot touch it, and a delivery being retried is not sent twice.
    const other = await seedTenant(app.db, `other-${n}`);
    await expect(redeliver({ db: app.db, tenantId: other.tenantId, deliveryId: dead.id, actor: "user:x" })).rejects.toMatchObject({ code: "delivery-not-found" });
  });
});

describe("the retry window and unsignable deliveries", () => {
  // The worker was down for longer than the window (4 s here) when the event was written: the
  // window is measured from the first try, so that try failing is retried, not dead on arrival.
  it("a delivery written long before its first try gets its retry window from that try", async () => {
    const { keys, receiver, tool } = await setup(["operation.unknown"]);
    receiver.answer((_r, count) => (count === 1 ? 503 : 200));
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: await tool(), args: {} });
    expect(c.status, c.text).toBe(201);
    // The change and every timestamp its delivery was written with, an hour back, in one transaction:
    // the running worker first sees the delivery as it would find it after an hour's outage. The
    // subscription too was there an hour ago (a delivery older than its subscription is one made for
    // an earlier subscription of the name, and is not sent).
    await app.db.$transaction([
      app.db.$executeRaw`UPDATE event_subscription SET created_at = created_at - interval '1 hour' WHERE tenant_id = ${keys.tenantId}`,
      app.db.$executeRaw`UPDATE operation SET state = 'unknown', lease_expires_at = NULL WHERE id = ${c.body.operationId}`,
      app.db.$executeRaw`
        UPDATE event_delivery SET created_at = created_at - interval '1 hour', window_started_at = window_started_at - interval '1 hour',
          next_attempt_at = next_attempt_at - interval '1 hour'
        WHERE tenant_id = ${keys.tenantId}`,
    ]);

    await waitFor("settled", async () => (await deliveriesOf(keys.tenantId))[0]?.state !== "pending");

    const [delivery] = await deliveriesOf(keys.tenantId);
    expect(delivery).toMatchObject({ state: "delivered", attempts: 2, lastStatus: 200 });
    expect(receiver.received()).toHaveLength(2);
    expect(delivery!.windowStartedAt!.getTime()).toBeGreaterThan(delivery!.createdAt.getTime() + 3500_000);
  });

  // A secret sealed under another TOLLGATE_SECRET_KEY, or a garbled box: nothing unsigned is sent,
  // and each try is recorded like any failed one (retried, as restoring the key or rotating the
  // secret mends it; dead past the window, from where the operator can redeliver).
  it("a delivery whose signing secret cannot be opened is a failed try with a clear error, then dead; the secret is never logged", async () => {
    const { keys, receiver, secret, tool } = await setup(["operation.succeeded"]);
    const second = await call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/garbled", { key: keys.admin, body: { url: receiver.url, events: ["operation.succeeded"] } });
    expect(second.status, second.text).toBe(201);
    const otherKeyBox = encryptSecret(secret, "another-server-secret-0123456789abcdef0123");
    await app.db.$executeRaw`UPDATE event_subscription SET secret_encrypted = ${otherKeyBox} WHERE tenant_id = ${keys.tenantId} AND name = 'feed'`;
    await app.db.$executeRaw`UPDATE event_subscription SET secret_encrypted = 'v1.garbled' WHERE tenant_id = ${keys.tenantId} AND name = 'garbled'`;
    await claimAndComplete(keys, await tool(), { outcome: "succeeded" });

    await waitFor("both dead", async () => {
      const all = await deliveriesOf(keys.tenantId);
      return all.length === 2 && all.every((d) => d.state === "dead");
    });

    for (const d of await deliveriesOf(keys.tenantId)) {
      expect(d).toMatchObject({ lastStatus: null, lastError: "cannot open the subscription's signing secret: was TOLLGATE_SECRET_KEY changed?" });
      expect(d.attempts).toBeGreaterThanOrEqual(2);
    }
    expect(receiver.received()).toHaveLength(0);
    const logs = worker.logs.join("\n");
    for (const leaked of [secret, secret.slice(6), second.body.secret, otherKeyBox]) expect(logs).not.toContain(leaked);
  });
});

// Console review, 2026-12-01 night: a delivery to a port nobody listens on said only "fetch failed".
describe("a delivery that gets no answer", () => {
  it("says why in fixed words (connection refused), not the HTTP client's bare 'fetch failed'", async () => {
    const { keys, tool } = await setup(["operation.succeeded"]);
    const closed = await startEventReceiver();
    await closed.stop();
    await app.db.$executeRaw`UPDATE event_subscription SET url = ${closed.url} WHERE tenant_id = ${keys.tenantId} AND name = 'feed'`;
    await claimAndComplete(keys, await tool(), { outcome: "succeeded" });

    const [tried] = await waitFor("a failed try", async () => {
      const all = await deliveriesOf(keys.tenantId);
      return all.length === 1 && all[0]!.attempts >= 1 ? all : null;
    });
    expect(tried).toMatchObject({ lastStatus: null, lastError: "connection refused" });
  });
});

describe("the lease reaper", () => {
  it("an expired lease with takeover never becomes unknown with no agent around, and operation.unknown is delivered", async () => {
    const { keys, receiver, tool } = await setup(["operation.unknown"]);
    const never = await tool({ leaseSeconds: 1, takeover: "never" });
    const dedup = await tool({ leaseSeconds: 1, takeover: "deduplicated", maxAttempts: 3 });
    const idem = `idem-${randomUUID()}`;
    const abandoned = await claim(app.baseUrl, keys.agent, idem, { tool: never, args: {} });
    const waiting = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: dedup, args: {} });
    expect(abandoned.status).toBe(201);
    expect(waiting.status).toBe(201);

    const [got] = await waitFor("operation.unknown", () => (receiver.received().length ? receiver.received() : null));

    expect(got!.body).toMatchObject({ type: "operation.unknown", data: { operation: { operationId: abandoned.body.operationId, state: "unknown" }, previousState: "processing" } });
    const op = await app.db.operation.findUniqueOrThrow({ where: { id: abandoned.body.operationId } });
    // Not a conflicting claim: nobody claimed.
    expect(op).toMatchObject({ state: "unknown", leaseExpiresAt: null, conflictCount: 0 });
    expect(await app.db.attempt.findFirst({ where: { operationId: op.id } })).toMatchObject({ outcome: "lease_lost" });
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: op.id, action: "operation.unknown" } });
    expect(audit).toMatchObject({ actor: "system:lease-reaper", before: { state: "processing", attempt: 1 }, after: { state: "unknown" } });
    // A lease that a takeover may still pick up is left alone.
    expect(await app.db.operation.findUniqueOrThrow({ where: { id: waiting.body.operationId } })).toMatchObject({ state: "processing" });
    // The agent that comes back learns the outcome is unknown.
    const late = await claim(app.baseUrl, keys.agent, idem, { tool: never, args: {} });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("outcome-unknown");
  });
});

describe("scheduled jobs", () => {
  it("approval expiry and pruning are on the crontab; their jobs expire approvals (approval.decided goes out) and prune", async () => {
    const crontab = await app.db.$queryRaw<{ identifier: string }[]>`SELECT identifier FROM graphile_worker._private_known_crontabs ORDER BY 1`;
    expect(crontab.map((c) => c.identifier)).toEqual(["expire-approvals", "prune"]);

    const { keys, receiver, tool } = await setup(["approval.decided"]);
    const gated = await tool({ approval: "required" });
    const waiting = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: gated, args: {} });
    expect(waiting.status).toBe(202);
    await app.db.$executeRaw`UPDATE approval SET expires_at = now() - interval '1 second' WHERE id = ${waiting.body.approval.id}`;
    const plain = await tool({ resultRetentionHours: 1 });
    const old = await claimAndComplete(keys, plain, { outcome: "succeeded" });
    await app.db.$executeRaw`UPDATE operation SET result_expires_at = now() - interval '1 second' WHERE id = ${old}`;

    // What the crontab does each minute, now.
    await app.db.$queryRaw`SELECT graphile_worker.add_job('expire-approvals')`;
    await app.db.$queryRaw`SELECT graphile_worker.add_job('prune')`;

    const [got] = await waitFor("approval.decided", () => (receiver.received().length ? receiver.received() : null));
    expect(got!.body).toMatchObject({
      type: "approval.decided",
      data: { approval: { id: waiting.body.approval.id, state: "expired" }, operation: { operationId: waiting.body.operationId, state: "rejected" } },
    });
    expect(await app.db.operation.findUniqueOrThrow({ where: { id: waiting.body.operationId } })).toMatchObject({ state: "rejected" });
    await waitFor("pruned", async () => (await app.db.operation.count({ where: { id: old } })) === 0);
  });
});

describe("graceful shutdown", () => {
  it("SIGTERM lets the delivery in flight finish, then the worker exits 0", async () => {
    const { keys, receiver, tool } = await setup(["operation.succeeded"]);
    receiver.answer(() => new Promise((resolve) => setTimeout(() => resolve(200), 1500)));
    await claimAndComplete(keys, await tool(), { outcome: "succeeded" });
    await waitFor("the request in flight", () => receiver.received().length === 1);

    const code = await worker.stop();

    expect(code).toBe(0);
    expect((await deliveriesOf(keys.tenantId))[0]).toMatchObject({ state: "delivered", attempts: 1 });
    expect(receiver.received()).toHaveLength(1);
    expect(worker.logs.join("\n")).not.toMatch(/"level":50/);
  });
});
