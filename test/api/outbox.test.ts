import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expireDueApprovals } from "@/lib/approvals/expire-approvals";
import { deliverEvent } from "@/lib/outbox/deliver-event";
import { defaultDeliverySettings } from "@/lib/outbox/delivery-settings";
import { listDeliveries } from "@/lib/outbox/list-deliveries";
import { pruneOutbox } from "@/lib/outbox/prune-outbox";
import { createConsoleUser } from "../support/browser";
import { signInConsole } from "../support/console-session";
import { call, claim, type Reply } from "../support/http";
import { runCli } from "../support/run-cli";
import { createTool as createToolIn, expectProblem, type Policy } from "../support/protocol";
import { seedTenant, startTestApp, TEST_SECRET, type TenantKeys, type TestApp } from "../support/test-app";
import { waitUntilLeaseExpired } from "../support/wait-for-lease";

// Event subscriptions (admin API) and the transactional outbox: every event of the contract's
// list is written by a database trigger in the very transaction that makes the change, with one
// delivery and one queued job per subscriber, whoever the writer is. No worker runs here; the
// worker tests deliver.

let app: TestApp;
let acme: TenantKeys;
let globex: TenantKeys;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
});
afterAll(async () => {
  await app?.stop();
});

const allEvents = ["operation.succeeded", "operation.failed", "operation.unknown", "operation.resolved", "approval.requested", "approval.decided", "webhook.unmatched"];

function putSubscription(name: string, body: unknown, key = acme.admin): Promise<Reply> {
  return call(app.baseUrl, "PUT", `/api/v1/event-subscriptions/${name}`, { key, body });
}

const createTool = (policy: Policy = {}, keys = acme) => createToolIn(app.baseUrl, [keys], { policy });

async function claimNew(tool: string, keys = acme): Promise<{ operationId: string; token: string; body: Reply["body"] }> {
  const res = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool, args: { n: 1 } });
  expect([201, 202], res.text).toContain(res.status);
  return { operationId: res.body.operationId, token: res.body.attempt?.fencingToken, body: res.body };
}

function complete(keys: TenantKeys, op: { operationId: string; token: string }, body: Record<string, unknown>): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/complete`, { key: keys.agent, body: { fencingToken: op.token, ...body } });
}

// The events written for an operation (by its id in the payload), oldest first, with their deliveries and jobs.
type EventRow = { id: string; type: string; tenantId: string; payload: any; deliveries: string[]; subscriptions: string[] }; // eslint-disable-line @typescript-eslint/no-explicit-any
async function eventsFor(operationId: string) {
  const events = await app.db.$queryRaw<EventRow[]>`
    SELECT e.id, e.type, e.tenant_id AS "tenantId", e.payload,
      array_agg(d.id ORDER BY d.id) AS deliveries, array_agg(s.name ORDER BY d.id) AS subscriptions
    FROM outbox_event e JOIN event_delivery d ON d.event_id = e.id JOIN event_subscription s ON s.id = d.subscription_id
    WHERE coalesce(e.payload -> 'operation' ->> 'operationId', e.payload -> 'approval' ->> 'operationId') = ${operationId}
    GROUP BY e.id ORDER BY e.created_at, e.type`;
  return events;
}
// An admin of the tenant on the console: Redeliver as its button sends it, and the dead
// deliveries' table as the page renders it (which rows have a Redeliver button).
async function consoleAdmin(keys: TenantKeys) {
  const admin = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "admin", tenants: [keys.slug] }));
  return {
    redeliver: (deliveryId: string) => admin.post(`/api/console/${keys.slug}/deliveries/${deliveryId}/redeliver`, {}),
    // Refused (409, saying why): the delivery stays dead, nothing is audited as redelivered.
    expectRefused: async (deliveryId: string, why: string) => {
      const res = await admin.post(`/api/console/${keys.slug}/deliveries/${deliveryId}/redeliver`, {});
      expectProblem(res, 409, "invalid-state");
      expect(res.body.detail).toContain(why);
      expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ state: "dead" });
      expect(await app.db.auditEvent.count({ where: { targetId: deliveryId, action: "event_delivery.redelivered" } })).toBe(0);
    },
    redeliverButtons: async (): Promise<Map<string, boolean>> => {
      const page = await admin.request("GET", `/t/${keys.slug}/subscriptions`);
      expect(page.status).toBe(200);
      const table = page.text.slice(page.text.indexOf('aria-label="Dead deliveries"'));
      const rows = table.slice(0, table.indexOf("</table>")).split("<tr").slice(1);
      return new Map(rows.flatMap((r) => { const id = /data-delivery="([^"]+)"/.exec(r)?.[1]; return id ? [[id, r.includes(">Redeliver<")] as [string, boolean]] : []; }));
    },
  };
}

const jobKeys = async () =>
  (await app.db.$queryRaw<{ key: string }[]>`SELECT key FROM graphile_worker.jobs WHERE task_identifier = 'deliver-event'`).map((j) => j.key);

describe("event subscriptions API", () => {
  it("PUT creates (201) and shows the signing secret once; GET and a replace never show it; rotateSecret shows a new one", async () => {
    const created = await putSubscription("ops-feed", { url: "https://hooks.example.com/tollgate", events: ["operation.unknown"] });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get("location")).toBe("/api/v1/event-subscriptions/ops-feed");
    // A shown secret must not be stored by a cache (no-transform is added to every small answer).
    expect(created.headers.get("cache-control")?.split(/,\s*/)).toContain("no-store");
    expect(created.body).toMatchObject({ name: "ops-feed", url: "https://hooks.example.com/tollgate", events: ["operation.unknown"] });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const read = await call(app.baseUrl, "GET", "/api/v1/event-subscriptions/ops-feed", { key: acme.admin });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("secret");
    expect(read.text).not.toContain(created.body.secret);

    const replaced = await putSubscription("ops-feed", { url: "https://hooks.example.com/v2", events: ["operation.unknown", "operation.resolved"] });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).not.toHaveProperty("secret");
    expect(replaced.body.events).toEqual(["operation.unknown", "operation.resolved"]);

    const rotated = await putSubscription("ops-feed", { url: "https://hooks.example.com/v2", events: ["operation.unknown"], rotateSecret: true });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);

    const row = await app.db.eventSubscription.findFirstOrThrow({ where: { tenantId: acme.tenantId, name: "ops-feed" } });
    // Stored only encrypted.
    expect(row.secretEncrypted).not.toContain(rotated.body.secret.slice(6));
    const list = await call(app.baseUrl, "GET", "/api/v1/event-subscriptions", { key: acme.admin });
    expect(list.body.subscriptions.map((s: { name: string }) => s.name)).toContain("ops-feed");
    const audit = await app.db.auditEvent.findMany({ where: { tenantId: acme.tenantId, targetType: "event_subscription", targetId: "ops-feed" }, orderBy: { id: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["event_subscription.created", "event_subscription.replaced", "event_subscription.replaced"]);
    expect(JSON.stringify(audit.map((a) => [a.before, a.after]))).not.toContain(rotated.body.secret);
  });

  it("the audit log keeps a subscription's endpoint redacted (a hook URL is often a credential) with a digest that still shows a change", async () => {
    const url = "https://hooks.slack.example/services/T1/B2/s3cr3t-token";
    expect((await putSubscription("slack-feed", { url, events: ["operation.unknown"] })).status).toBe(201);
    expect((await putSubscription("slack-feed", { url: `${url}-2`, events: ["operation.unknown"] })).status).toBe(200);

    const audit = await app.db.auditEvent.findMany({ where: { tenantId: acme.tenantId, targetType: "event_subscription", targetId: "slack-feed" }, orderBy: { id: "asc" } });
    expect(JSON.stringify(audit.map((a) => [a.before, a.after]))).not.toContain("s3cr3t");
    const replaced = audit[1]!;
    expect(replaced.before).toMatchObject({ url: "https://hooks.slack.example/services/…" });
    expect(replaced.after).toMatchObject({ url: "https://hooks.slack.example/services/…" });
    const digests = [replaced.before, replaced.after].map((v) => (v as { urlDigest: string }).urlDigest);
    expect(digests[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(digests[0]).not.toBe(digests[1]);
  });

  it("bad input is 400 and stores nothing; only admins; another tenant's subscription is 404; DELETE stops it", async () => {
    const bad: unknown[] = [
      { url: "ftp://x.example.com", events: ["operation.unknown"] },
      { url: "https://user:pw@x.example.com", events: ["operation.unknown"] },
      { url: "not a url", events: ["operation.unknown"] },
      { url: "https://x.example.com", events: [] },
      { url: "https://x.example.com", events: ["operation.exploded"] },
      { url: "https://x.example.com", events: ["operation.unknown", "operation.unknown"] },
      { url: "https://x.example.com", events: ["operation.unknown"], extra: true },
    ];
    for (const body of bad) expectProblem(await putSubscription("bad-one", body), 400, "invalid-request");
    expectProblem(await putSubscription("Bad Name", { url: "https://x.example.com", events: ["operation.unknown"] }), 400, "invalid-request");
    expectProblem(await putSubscription("by-agent", { url: "https://x.example.com", events: ["operation.unknown"] }, acme.agent), 403, "forbidden");
    expect(await app.db.eventSubscription.count({ where: { name: { in: ["bad-one", "by-agent"] } } })).toBe(0);

    const first = await putSubscription("globex-only", { url: "https://x.example.com", events: ["operation.unknown"] }, globex.admin);
    expect(first.status).toBe(201);
    expectProblem(await call(app.baseUrl, "GET", "/api/v1/event-subscriptions/globex-only", { key: acme.admin }), 404, "subscription-not-found");
    expectProblem(await call(app.baseUrl, "DELETE", "/api/v1/event-subscriptions/globex-only", { key: acme.admin }), 404, "subscription-not-found");

    const removed = await call(app.baseUrl, "DELETE", "/api/v1/event-subscriptions/globex-only", { key: globex.admin });
    expect(removed.status, removed.text).toBe(204);
    expectProblem(await call(app.baseUrl, "GET", "/api/v1/event-subscriptions/globex-only", { key: globex.admin }), 404, "subscription-not-found");
    // It no longer exists for the API, so a PUT of the same name creates it again: 201, with a new
    // secret shown once (not the old one, which its owner may have thrown away).
    const again = await putSubscription("globex-only", { url: "https://x.example.com", events: ["operation.unknown"] }, globex.admin);
    expect(again.status, again.text).toBe(201);
    expect(again.body.secret).toMatch(/^whsec_/);
    expect(again.body.secret).not.toBe(first.body.secret);
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { tenantId: globex.tenantId, targetId: "globex-only" }, orderBy: { id: "desc" } });
    expect(audit).toMatchObject({ action: "event_subscription.created", before: null });
    // And a PUT of the live subscription is a replacement again, keeping that secret.
    const replaced = await putSubscription("globex-only", { url: "https://y.example.com", events: ["operation.unknown"] }, globex.admin);
    expect(replaced.status).toBe(200);
    expect(replaced.body.secret).toBeUndefined();
  });
});

describe("the outbox: events written in the transaction of the change", () => {
  let tenant: TenantKeys;
  beforeAll(async () => {
    // A tenant of its own, so other tests' subscriptions do not interfere.
    tenant = await seedTenant(app.db, "outbox");
    expect((await putSubscription("everything", { url: "https://a.example.com/hook", events: allEvents }, tenant.admin)).status).toBe(201);
    expect((await putSubscription("unknown-only", { url: "https://b.example.com/hook", events: ["operation.unknown"] }, tenant.admin)).status).toBe(201);
  });

  it("complete succeeded / failed → operation.succeeded / failed, to the subscribers that want it, each delivery with its job", async () => {
    const tool = await createTool({}, tenant);
    const ok = await claimNew(tool, tenant);
    const bad = await claimNew(tool, tenant);
    expect((await complete(tenant, ok, { outcome: "succeeded", result: { statusCode: 201, resourceId: "T-1" } })).status).toBe(200);
    expect((await complete(tenant, bad, { outcome: "failed", error: { code: "card_declined", message: "declined" } })).status).toBe(200);

    const okEvents = await eventsFor(ok.operationId);
    expect(okEvents.map((e) => [e.type, e.subscriptions])).toEqual([["operation.succeeded", ["everything"]]]);
    expect(okEvents[0]!.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(okEvents[0]!.payload).toMatchObject({ operation: { operationId: ok.operationId, state: "succeeded", result: { resourceId: "T-1" } }, previousState: "processing" });
    expect((await eventsFor(bad.operationId)).map((e) => e.type)).toEqual(["operation.failed"]);
    const keys = await jobKeys();
    for (const e of [...okEvents, ...(await eventsFor(bad.operationId))]) for (const d of e.deliveries) expect(keys).toContain(`delivery:${d}`);
  });

  // Newcomer review: a removed subscription's deliveries stayed "pending, next try in …" for up
  // to two hours, and a redeliver of one reset its tries and died again at once.
  it("removing a subscription ends its pending deliveries at once; they cannot be redelivered, not even once it is put again", async () => {
    const own = await seedTenant(app.db, `outbox-rm-${randomUUID().slice(0, 8)}`);
    expect((await putSubscription("leaving", { url: "https://c.example.com/hook", events: ["operation.succeeded"] }, own.admin)).status).toBe(201);
    const op = await claimNew(await createTool({}, own), own);
    expect((await complete(own, op, { outcome: "succeeded" })).status).toBe(200);
    const [event] = await eventsFor(op.operationId);
    const deliveryId = event!.deliveries[0]!;
    expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ state: "pending" });

    const removed = await call(app.baseUrl, "DELETE", "/api/v1/event-subscriptions/leaving", { key: own.admin });
    expect(removed.status, removed.text).toBe(204);

    const dead = await app.db.eventDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
    expect(dead).toMatchObject({ state: "dead", lastError: "the subscription was removed", nextAttemptAt: null });
    expect(dead.deadAt).not.toBeNull();
    const redeliver = () => app.db.$queryRaw<{ r: { code: string } }[]>`SELECT tollgate_redeliver(${own.tenantId}, ${deliveryId}, 'user:ops@example.test') AS r`;
    expect((await redeliver())[0]!.r.code).toBe("subscription-removed");
    expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ state: "dead", attempts: dead.attempts });
    expect(await app.db.auditEvent.count({ where: { targetId: deliveryId, action: "event_delivery.redelivered" } })).toBe(0);

    // Put again, it is a new subscription (201, a new secret) on the same row: the old one's
    // deliveries were made for an earlier subscription of the name, and stay where they are.
    expect((await putSubscription("leaving", { url: "https://c.example.com/hook", events: ["operation.succeeded"] }, own.admin)).status).toBe(201);
    expect((await redeliver())[0]!.r.code).toBe("earlier-subscription");
    expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ state: "dead", attempts: dead.attempts });
  });

  // Last read (2026-12-02): a delivery was stamped with its transaction's start, so one emitted by
  // a transaction that began before its subscription was made (and found it once committed) was
  // "made before the subscription", and its redelivery refused as for an earlier subscription.
  it("a delivery whose transaction began before its subscription was made is that subscription's own: it can be redelivered", async () => {
    const own = await seedTenant(app.db, `outbox-early-${randomUUID().slice(0, 8)}`);
    const early = new pg.Client({ connectionString: app.url });
    await early.connect();
    let deliveryId: string;
    try {
      await early.query("BEGIN");
      await early.query("SELECT now()"); // the transaction's start, before the subscription
      expect((await putSubscription("new-feed", { url: "https://c.example.com/hook", events: ["operation.succeeded"] }, own.admin)).status).toBe(201);
      // An event emitted now (a statement's snapshot sees the committed subscription), as a trigger emits it.
      const emitted = await early.query<{ id: string }>(
        "SELECT tollgate_emit_event($1, 'operation.succeeded', '{}'::jsonb, tollgate_event_subscribers($1, 'operation.succeeded')) AS id",
        [own.tenantId],
      );
      await early.query("COMMIT");
      deliveryId = (await app.db.eventDelivery.findFirstOrThrow({ where: { eventId: emitted.rows[0]!.id } })).id;
    } finally {
      await early.end();
    }
    await app.db.eventDelivery.update({ where: { id: deliveryId }, data: { state: "dead", deadAt: new Date(), nextAttemptAt: null } });

    const redelivered = await app.db.$queryRaw<{ r: { code: string } }[]>`SELECT tollgate_redeliver(${own.tenantId}, ${deliveryId}, 'user:ops@example.test') AS r`;
    expect(redelivered[0]!.r.code).toBe("redelivered");
  });

  // Review (2026-12-02): "pager" on URL X for operation.* was deleted, its pending deliveries
  // died; put again on URL Y for approval.requested only, the old dead deliveries showed a
  // Redeliver button, and redelivering sent operation results to Y, which never subscribed to them.
  it("a subscription put again after a removal is a new one: the old one's deliveries are not redelivered to it, nor offered", async () => {
    const own = await seedTenant(app.db, `outbox-again-${randomUUID().slice(0, 8)}`);
    const operationEvents = ["operation.succeeded", "operation.failed", "operation.unknown", "operation.resolved"];
    expect((await putSubscription("pager", { url: "https://x.example.com/hook", events: operationEvents }, own.admin)).status).toBe(201);
    const tool = await createTool({ approval: "required" }, own);
    const op = await claimNew(await createTool({}, own), own);
    expect((await complete(own, op, { outcome: "succeeded", result: { statusCode: 201, resourceId: "T-secret" } })).status).toBe(200);
    const old = (await eventsFor(op.operationId))[0]!.deliveries[0]!;
    expect((await call(app.baseUrl, "DELETE", "/api/v1/event-subscriptions/pager", { key: own.admin })).status).toBe(204);
    expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: old } })).toMatchObject({ state: "dead" });

    const again = await putSubscription("pager", { url: "https://y.example.com/hook", events: ["approval.requested"] }, own.admin);
    expect(again.status, again.text).toBe(201);
    const asked = await claimNew(tool, own);
    const fresh = (await eventsFor(asked.operationId)).find((e) => e.type === "approval.requested")!.deliveries[0]!;
    await app.db.$executeRaw`UPDATE event_delivery SET state = 'dead', dead_at = now() WHERE id = ${fresh}`;
    const jobsBefore = (await jobKeys()).filter((k) => k === `delivery:${old}`).length;

    // The console offers Redeliver only where it would be done.
    const listed = await listDeliveries({ db: app.db, tenantId: own.tenantId, state: "dead" });
    expect(listed.map((d) => [d.id, d.redeliverBlock])).toEqual([
      [fresh, null],
      [old, "earlier-subscription"],
    ]);
    const admin = await consoleAdmin(own);
    expect(await admin.redeliverButtons()).toEqual(new Map([[fresh, true], [old, false]]));

    await admin.expectRefused(old, "made for an earlier subscription of this name");
    expect((await jobKeys()).filter((k) => k === `delivery:${old}`).length).toBe(jobsBefore);
    // The new subscription's own dead delivery is redelivered as ever.
    expect((await admin.redeliver(fresh)).status).toBe(200);
  });

  // A replace that drops an event type: the endpoint said it no longer wants those events (new ones
  // of the type are not sent), so an old delivery of the type is not sent again either. A replace
  // of the URL alone still redelivers: mending a broken endpoint and sending again is the point.
  it("a delivery of an event type its subscription no longer subscribes to is not redelivered, nor offered; a new URL alone is", async () => {
    const own = await seedTenant(app.db, `outbox-types-${randomUUID().slice(0, 8)}`);
    expect((await putSubscription("feed", { url: "https://x.example.com/hook", events: ["operation.succeeded", "operation.failed"] }, own.admin)).status).toBe(201);
    const tool = await createTool({}, own);
    const ok = await claimNew(tool, own);
    const bad = await claimNew(tool, own);
    expect((await complete(own, ok, { outcome: "succeeded" })).status).toBe(200);
    expect((await complete(own, bad, { outcome: "failed", error: { code: "declined", message: "no" } })).status).toBe(200);
    const succeeded = (await eventsFor(ok.operationId))[0]!.deliveries[0]!;
    const failed = (await eventsFor(bad.operationId))[0]!.deliveries[0]!;
    await app.db.$executeRaw`UPDATE event_delivery SET state = 'dead', dead_at = now() WHERE id IN (${succeeded}, ${failed})`;

    const replaced = await putSubscription("feed", { url: "https://y.example.com/hook", events: ["operation.failed"] }, own.admin);
    expect(replaced.status, replaced.text).toBe(200);
    const listed = await listDeliveries({ db: app.db, tenantId: own.tenantId, subscription: "feed" });
    expect(new Map(listed.map((d) => [d.id, d.redeliverBlock]))).toEqual(new Map([[succeeded, "not-subscribed"], [failed, null]]));
    const admin = await consoleAdmin(own);
    expect(await admin.redeliverButtons()).toEqual(new Map([[succeeded, false], [failed, true]]));

    await admin.expectRefused(succeeded, "no longer subscribes to operation.succeeded");
    expect((await admin.redeliver(failed)).status).toBe(200);
    expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: failed } })).toMatchObject({ state: "pending" });
  });

  // Review, 2026-12-03: a try only checked that the subscription was not removed, so a pending
  // retry (due in up to two hours) went to whatever the name pointed at by then.
  it("a pending delivery's next try is not sent once its subscription was replaced without the event type, or removed and put again", async () => {
    const own = await seedTenant(app.db, `outbox-try-${randomUUID().slice(0, 8)}`);
    const sent: string[] = [];
    const fetchSpy = Object.assign(
      async (url: string) => {
        sent.push(url);
        return new Response(null, { status: 204 });
      },
      { close: async () => undefined },
    );
    const tryOnce = (deliveryId: string) =>
      deliverEvent({ db: app.db, deliveryId, settings: defaultDeliverySettings, serverSecret: TEST_SECRET, fetch: fetchSpy });
    expect((await putSubscription("feed", { url: "https://x.example.com/hook", events: ["operation.succeeded", "operation.failed"] }, own.admin)).status).toBe(201);
    expect((await putSubscription("pager", { url: "https://old.example.com/hook", events: ["operation.succeeded"] }, own.admin)).status).toBe(201);
    const tool = await createTool({}, own);
    const [ok, bad] = [await claimNew(tool, own), await claimNew(tool, own)];
    expect((await complete(own, ok, { outcome: "succeeded" })).status).toBe(200);
    expect((await complete(own, bad, { outcome: "failed", error: { code: "declined", message: "no" } })).status).toBe(200);
    const deliveryOf = async (operationId: string, subscription: string) => {
      const [event] = await eventsFor(operationId);
      const ids = event!.deliveries;
      return (await app.db.eventDelivery.findFirstOrThrow({ where: { id: { in: ids }, subscription: { name: subscription } } })).id;
    };
    const succeededToFeed = await deliveryOf(ok.operationId, "feed");
    const failedToFeed = await deliveryOf(bad.operationId, "feed");
    const toPager = await deliveryOf(ok.operationId, "pager");

    // feed drops operation.succeeded and moves; pager is removed while its delivery was being
    // written (the removal's own sweep could not see it: put back to pending here) and put again.
    expect((await putSubscription("feed", { url: "https://y.example.com/hook", events: ["operation.failed"] }, own.admin)).status).toBe(200);
    expect((await call(app.baseUrl, "DELETE", "/api/v1/event-subscriptions/pager", { key: own.admin })).status).toBe(204);
    await app.db.$executeRaw`UPDATE event_delivery SET state = 'pending', dead_at = NULL, last_error = NULL WHERE id = ${toPager}`;
    expect((await putSubscription("pager", { url: "https://new.example.com/hook", events: ["operation.succeeded"] }, own.admin)).status).toBe(201);

    expect(await tryOnce(succeededToFeed)).toMatchObject({ result: "dead", error: "the subscription no longer subscribes to operation.succeeded" });
    expect(await tryOnce(toPager)).toMatchObject({ result: "dead" });
    expect(await tryOnce(failedToFeed)).toMatchObject({ result: "delivered" });

    expect(sent).toEqual(["https://y.example.com/hook"]);
    expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: succeededToFeed } })).toMatchObject({ state: "dead", attempts: 0 });
    expect(await app.db.eventDelivery.findUniqueOrThrow({ where: { id: toPager } })).toMatchObject({
      state: "dead",
      lastError: "made for an earlier subscription of this name, since removed; the one now under the name never asked for it",
    });
  });

  // Console review, 2026-12-03: "New subscription" under a taken name replaced that subscription
  // (200, its old secret kept, which the new receiver never got), and an edit from a stale form
  // put back what another admin had changed.
  it("the console's forms: a create under a taken name, and an edit of a subscription changed or removed since, are 409 and change nothing", async () => {
    const own = await seedTenant(app.db, `outbox-forms-${randomUUID().slice(0, 8)}`);
    const admin = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "admin", tenants: [own.slug] }));
    const path = `/api/console/${own.slug}/subscriptions`;
    const stored = (name: string) => app.db.eventSubscription.findFirstOrThrow({ where: { tenantId: own.tenantId, name } });
    expect((await putSubscription("pager", { url: "https://a.example.com/hook", events: ["operation.unknown"] }, own.admin)).status).toBe(201);
    const opened = (await stored("pager")).updatedAt.toISOString();

    const taken = await admin.post(path, { name: "pager", url: "https://b.example.com/hook", events: ["operation.failed"], create: true });
    expectProblem(taken, 409, "invalid-state");
    expect(taken.body.detail).toContain("exists already");
    expect(await stored("pager")).toMatchObject({ url: "https://a.example.com/hook", events: ["operation.unknown"] });

    // Another admin adds an event type while this one's form is open.
    expect((await putSubscription("pager", { url: "https://a.example.com/hook", events: ["operation.unknown", "operation.failed"] }, own.admin)).status).toBe(200);
    const stale = await admin.post(path, { name: "pager", url: "https://c.example.com/hook", events: ["operation.unknown"], seenUpdatedAt: opened });
    expectProblem(stale, 409, "invalid-state");
    expect(await stored("pager")).toMatchObject({ url: "https://a.example.com/hook", events: ["operation.unknown", "operation.failed"] });
    const current = (await stored("pager")).updatedAt.toISOString();
    const edited = await admin.post(path, { name: "pager", url: "https://c.example.com/hook", events: ["operation.unknown"], seenUpdatedAt: current });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.secret).toBeUndefined();

    expect((await call(app.baseUrl, "DELETE", "/api/v1/event-subscriptions/pager", { key: own.admin })).status).toBe(204);
    const removed = await admin.post(path, { name: "pager", url: "https://c.example.com/hook", events: ["operation.unknown"], seenUpdatedAt: edited.body.updatedAt });
    expectProblem(removed, 409, "invalid-state");
    expect((await stored("pager")).disabledAt).not.toBeNull();
    // A name that is free (or free again) is created by the form, with its secret shown once.
    const fresh = await admin.post(path, { name: "pager", url: "https://d.example.com/hook", events: ["operation.unknown"], create: true });
    expect(fresh.status, fresh.text).toBe(201);
    expect(fresh.body.secret).toMatch(/^whsec_/);
    expectProblem(await admin.post(path, { name: "x", url: "https://d.example.com/hook", events: ["operation.unknown"], create: true, seenUpdatedAt: current }), 400, "invalid-request");
  });

  it("two redelivers of one event's deliveries at once both go through (the event row is locked for the write, never upgraded)", async () => {
    const own = await seedTenant(app.db, `outbox-two-${randomUUID().slice(0, 8)}`);
    for (const name of ["first", "second"]) {
      expect((await putSubscription(name, { url: `https://${name}.example.com/hook`, events: ["operation.succeeded"] }, own.admin)).status).toBe(201);
    }
    const op = await claimNew(await createTool({}, own), own);
    expect((await complete(own, op, { outcome: "succeeded" })).status).toBe(200);
    const [event] = await eventsFor(op.operationId);
    expect(event!.deliveries).toHaveLength(2);
    for (let round = 0; round < 5; round++) {
      await app.db.$executeRaw`UPDATE event_delivery SET state = 'dead', dead_at = now() WHERE event_id = ${event!.id}`;
      const answers = await Promise.all(
        event!.deliveries.map((id) => app.db.$queryRaw<{ r: { code: string } }[]>`SELECT tollgate_redeliver(${own.tenantId}, ${id}, 'user:ops@example.test') AS r`),
      );
      expect(answers.map((a) => a[0]!.r.code)).toEqual(["redelivered", "redelivered"]);
    }
  });

  it("a redeliver racing `tollgate prune` over a month-old dead delivery keeps the delivery it made pending", async () => {
    const op = await claimNew(await createTool({}, tenant), tenant);
    expect((await complete(tenant, op, { outcome: "succeeded" })).status).toBe(200);
    const [event] = await eventsFor(op.operationId);
    const deliveryId = event!.deliveries[0]!;
    await app.db.$executeRaw`UPDATE event_delivery SET state = 'dead', dead_at = now() WHERE id = ${deliveryId}`;
    await app.db.$executeRaw`UPDATE outbox_event SET created_at = now() - interval '40 days' WHERE id = ${event!.id}`;

    // The redeliver's transaction is still open when prune runs.
    const client = new pg.Client({ connectionString: app.url });
    await client.connect();
    try {
      await client.query("BEGIN");
      const redelivered = await client.query<{ r: { code: string } }>("SELECT tollgate_redeliver($1, $2, $3) AS r", [tenant.tenantId, deliveryId, "user:ops@example.test"]);
      expect(redelivered.rows[0]!.r.code).toBe("redelivered");
      const pruning = pruneOutbox({ db: app.db, retentionDays: 30 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await client.query("COMMIT");
      await pruning;
    } finally {
      await client.end();
    }

    expect(await app.db.eventDelivery.findUnique({ where: { id: deliveryId } })).toMatchObject({ state: "pending" });
    // No longer pending, it is still kept for the retention after its redelivery: the time is on
    // the event row, which prune's FOR UPDATE re-checks in its newest version (a redeliver that
    // commits while prune's statement runs is judged on it, not on prune's older snapshot).
    await app.db.$executeRaw`UPDATE event_delivery SET state = 'delivered' WHERE id = ${deliveryId}`;
    expect((await app.db.outboxEvent.findUniqueOrThrow({ where: { id: event!.id } })).redeliveredAt).not.toBeNull();
    expect(await pruneOutbox({ db: app.db, retentionDays: 30 })).toBe(0);
    // Then the next prune forgets it: `tollgate prune` too, which a deployment runs from cron (it
    // said so, and pruned no outbox event).
    await app.db.$executeRaw`UPDATE outbox_event SET redelivered_at = now() - interval '31 days' WHERE id = ${event!.id}`;
    const cli = runCli(app.url, "prune");
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("Pruned 1 outbox event(s) older than 30 days");
    expect(await app.db.outboxEvent.count({ where: { id: event!.id } })).toBe(0);
  });

  it("an unknown outcome goes to both subscribers; the operator's resolution adds operation.resolved (and .succeeded)", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never" }, tenant);
    const op = await claimNew(tool, tenant);
    await waitUntilLeaseExpired(app.db, op.operationId);
    const retry = await claim(app.baseUrl, tenant.agent, `idem-${randomUUID()}`, { tool, args: { n: 2 } });
    expect(retry.status).toBe(201);
    expect((await complete(tenant, op, { outcome: "unknown" })).status).toBe(200);
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, {
      key: tenant.admin,
      body: { outcome: "succeeded", reason: "the provider shows the ticket", resourceId: "T-7" },
    });
    expect(resolved.status, resolved.text).toBe(200);

    const events = await eventsFor(op.operationId);
    expect(events.map((e) => [e.type, [...e.subscriptions].sort()])).toEqual([
      ["operation.unknown", ["everything", "unknown-only"]],
      ["operation.resolved", ["everything"]],
      ["operation.succeeded", ["everything"]],
    ]);
    const resolvedEvent = events.find((e) => e.type === "operation.resolved")!;
    expect(resolvedEvent.payload).toMatchObject({ previousState: "unknown", resolution: { outcome: "succeeded", via: "operator", resourceId: "T-7" } });
  });

  it("approval.requested on the claim, approval.decided on the decision", async () => {
    const tool = await createTool({ approval: "required" }, tenant);
    const op = await claimNew(tool, tenant);
    const approvalId = op.body.approval.id;
    const decided = await call(app.baseUrl, "POST", `/api/v1/approvals/${approvalId}/decision`, { key: tenant.approver, body: { decision: "reject", reason: "not today" } });
    expect(decided.status, decided.text).toBe(200);

    const events = await eventsFor(op.operationId);
    expect(events.map((e) => e.type)).toEqual(["approval.requested", "approval.decided"]);
    expect(events[0]!.payload).toMatchObject({ approval: { id: approvalId, state: "pending" }, operation: { operationId: op.operationId, state: "awaiting_approval" } });
    expect(events[1]!.payload).toMatchObject({ approval: { id: approvalId, state: "rejected", reason: "not today" } });
  });

  // The decision writes the approval and then its operation in one transaction; the event must
  // report both as the transaction leaves them, not the operation as it was in between.
  it("approval.decided carries the operation as the decision left it: pending once approved, rejected once rejected or expired", async () => {
    const tool = await createTool({ approval: "required" }, tenant);
    const decide = async (decision: "approve" | "reject", reason?: string) => {
      const op = await claimNew(tool, tenant);
      const res = await call(app.baseUrl, "POST", `/api/v1/approvals/${op.body.approval.id}/decision`, { key: tenant.approver, body: { decision, reason } });
      expect(res.status, res.text).toBe(200);
      return op.operationId;
    };
    const decidedEvent = async (operationId: string) => (await eventsFor(operationId)).find((e) => e.type === "approval.decided")?.payload;
    const approved = await decide("approve");
    const rejected = await decide("reject", "not this one");
    // Expired by the worker's sweep (what its expire-approvals job runs).
    const expiring = await claimNew(tool, tenant);
    await app.db.$executeRaw`UPDATE approval SET expires_at = now() - interval '1 second' WHERE id = ${expiring.body.approval.id}`;
    expect(await expireDueApprovals(app.db)).toBeGreaterThanOrEqual(1);

    expect(await decidedEvent(approved)).toMatchObject({
      approval: { state: "approved", operationState: "pending" },
      operation: { operationId: approved, state: "pending", error: null },
    });
    expect(await decidedEvent(rejected)).toMatchObject({
      approval: { state: "rejected", operationState: "rejected" },
      operation: { operationId: rejected, state: "rejected", error: { code: "approval-rejected", message: "not this one" } },
    });
    expect(await decidedEvent(expiring.operationId)).toMatchObject({
      approval: { state: "expired", operationState: "rejected" },
      operation: { operationId: expiring.operationId, state: "rejected", error: { code: "approval-expired" } },
    });
  });

  it("webhook.unmatched when a stored provider event settles nothing (whoever stores it)", async () => {
    const connectionId = `whc_${randomUUID()}`;
    await app.db.$executeRaw`
      INSERT INTO webhook_connection (id, tenant_id, name, scheme, secrets_encrypted, correlation_path, outcomes)
      VALUES (${connectionId}, ${tenant.tenantId}, 'billing', 'standard_webhooks', '{}', 'data.id', '{}')`;
    const eventId = `whe_${randomUUID()}`;
    await app.db.$executeRaw`
      INSERT INTO webhook_event (id, tenant_id, connection_id, provider_event_id, event_type, payload, correlation_value, status)
      VALUES (${eventId}, ${tenant.tenantId}, ${connectionId}, 'evt_1', 'charge.succeeded', '{}', 'op_nobody', 'unmatched')`;
    await app.db.$executeRaw`
      INSERT INTO webhook_event (id, tenant_id, connection_id, provider_event_id, event_type, payload, status)
      VALUES (${`whe_${randomUUID()}`}, ${tenant.tenantId}, ${connectionId}, 'evt_2', 'charge.succeeded', '{}', 'matched')`;

    const events = await app.db.outboxEvent.findMany({ where: { tenantId: tenant.tenantId, type: "webhook.unmatched" } });
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ webhookEvent: { id: eventId, connection: "billing", providerEventId: "evt_1", status: "unmatched", correlationValue: "op_nobody" } });
  });

  it("a rolled-back change leaves no event; no subscriber (or another tenant's) means nothing is written", async () => {
    const tool = await createTool({}, tenant);
    const op = await claimNew(tool, tenant);
    const client = new pg.Client({ connectionString: app.url });
    await client.connect();
    try {
      await client.query("BEGIN");
      await client.query("UPDATE operation SET state = 'unknown', lease_expires_at = NULL WHERE id = $1", [op.operationId]);
      const inside = await client.query("SELECT count(*)::int AS n FROM outbox_event WHERE payload -> 'operation' ->> 'operationId' = $1", [op.operationId]);
      expect(inside.rows[0].n).toBe(1);
      await client.query("ROLLBACK");
    } finally {
      await client.end();
    }
    expect(await eventsFor(op.operationId)).toEqual([]);

    // acme's only subscription ("ops-feed") wants operation.unknown: a success there writes nothing.
    const acmeTool = await createTool();
    const acmeOp = await claimNew(acmeTool);
    expect((await complete(acme, acmeOp, { outcome: "succeeded" })).status).toBe(200);
    expect(await app.db.outboxEvent.count({ where: { tenantId: acme.tenantId } })).toBe(0);
    const none = await seedTenant(app.db, "silent");
    const silentOp = await claimNew(await createTool({}, none), none);
    expect((await complete(none, silentOp, { outcome: "unknown" })).status).toBe(200);
    expect(await app.db.outboxEvent.count({ where: { tenantId: none.tenantId } })).toBe(0);
  });
});
