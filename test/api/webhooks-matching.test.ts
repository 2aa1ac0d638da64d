import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { pruneWebhookPayloads } from "@/lib/webhooks/prune-webhook-payloads";
import { matchWebhookEvent } from "@/lib/webhooks/match-webhook-event";
import { closeSettledAttempts } from "@/lib/operations/reap-expired-leases";
import { call, claim, type Reply } from "../support/http";
import { runCli } from "../support/run-cli";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { endLease, waitUntilLeaseExpired } from "../support/wait-for-lease";
import { createConnection, deliver, newStandardSecret, signStandard, ticketEvent } from "../support/webhooks";

// Issue 5, "Matching": a verified event names an operation (id or downstream key) of the
// connection's tenant; mapped to an outcome it settles a processing or unknown operation
// (compare-and-set; trace shows "resolved by webhook <event id>"); before the agent's
// complete it wins and the complete is compared with it; a contradicting one is flagged, not
// applied; unmatched and unmapped ones wait in the inbox. Two server instances, so 20
// concurrent deliveries race between processes, not inside one.

let app: TestApp;
let acme: TenantKeys;
let globex: TenantKeys;
const secret = newStandardSecret();
let connectionId: string;
const TOOL = "tickets.create";
const SHORT = "tickets.quick";
const RETRIED = "tickets.retried";
const RETRIED_DEDUPED = "tickets.retried-deduped";

beforeAll(async () => {
  app = await startTestApp({ instances: 2 });
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
  for (const keys of [acme, globex]) {
    await putTool(keys, TOOL, { leaseSeconds: 600, takeover: "never" });
    await putTool(keys, SHORT, { leaseSeconds: 1, takeover: "never" });
  }
  await putTool(acme, RETRIED, { leaseSeconds: 600, takeover: "never", maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
  await putTool(acme, RETRIED_DEDUPED, { leaseSeconds: 600, takeover: "deduplicated", maxAttempts: 4, backoff: { baseMs: 1, capMs: 1 } });
  ({ connectionId } = await createConnection(app.baseUrl, acme.admin, "tickets", { scheme: "standard-webhooks", secrets: [secret] }));
});
afterAll(async () => {
  await app?.stop();
});

async function putTool(keys: TenantKeys, name: string, policy: Record<string, unknown>): Promise<void> {
  const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy } });
  expect([200, 201], res.text).toContain(res.status);
}

type Claimed = { operationId: string; token: string; downstreamKey: string };

async function claimNew(keys: TenantKeys = acme, tool = TOOL): Promise<Claimed> {
  const res = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool, args: { title: "Printer on fire" } });
  expect(res.status, res.text).toBe(201);
  return { operationId: res.body.operationId, token: res.body.attempt.fencingToken, downstreamKey: res.body.downstreamKey };
}

async function claimWithKey(key: string, status = 201): Promise<Claimed & Reply> {
  const res = await claim(app.baseUrl, acme.agent, key, { tool: TOOL, args: { title: "Printer on fire" } });
  expect(res.status, res.text).toBe(status);
  return { ...res, operationId: res.body.operationId, token: res.body.attempt?.fencingToken, downstreamKey: res.body.downstreamKey };
}

function complete(op: Claimed, outcome: string, extra: Record<string, unknown> = {}, keys: TenantKeys = acme): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/complete`, {
    key: keys.agent,
    body: { fencingToken: op.token, outcome, ...extra },
  });
}

// The lease holder records a side effect of its operation (the provider is "tickets").
function putEffect(op: Claimed, name: string, state: string): Promise<Reply> {
  return call(app.baseUrl, "PUT", `/api/v1/operations/${op.operationId}/side-effects/${name}`, {
    key: acme.agent,
    body: { fencingToken: op.token, provider: "tickets", state },
  });
}

async function send(type: string, correlation: string | null, options: { id?: string; baseUrl?: string } = {}): Promise<Reply> {
  const res = await deliver(options.baseUrl ?? app.baseUrl, connectionId, signStandard(secret, ticketEvent(type, correlation), { id: options.id }));
  expect(res.status, res.text).toBe(200);
  return res;
}

const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });

// A replay through tollgate_claim itself, and the commit mode it left for its transaction.
async function replayCommitMode(operationId: string): Promise<string> {
  const op = await operation(operationId);
  const keyId = (await app.db.apiKey.findFirstOrThrow({ where: { tenantId: op.tenantId, principal: op.principal, revokedAt: null } })).id;
  return app.db.$transaction(async (tx) => {
    const [claimed] = await tx.$queryRaw<{ r: { code: string } }[]>`
      SELECT tollgate_claim(${op.tenantId}, ${keyId}, ${op.principal}, ${op.tool}, ${op.keyDigest}, ${op.fingerprint},
        ${JSON.stringify(op.args)}::jsonb, NULL, NULL, 'op_never_used', 'dk_never_used', 'test') AS r`;
    expect(claimed?.r.code).toBe("replay");
    const [mode] = await tx.$queryRaw<{ synchronous_commit: string }[]>`SHOW synchronous_commit`;
    return mode?.synchronous_commit ?? "";
  });
}
const event = (id: string) => app.db.webhookEvent.findUniqueOrThrow({ where: { id } });
const audits = (targetId: string, action?: string) => app.db.auditEvent.findMany({ where: { targetId, ...(action ? { action } : {}) }, orderBy: { id: "asc" } });

describe("a webhook before the agent's complete", () => {
  it("settles a processing operation whose lease is live: the trace's resolution says resolved by webhook <event id>", async () => {
    const op = await claimNew();

    const res = await send("ticket.created", op.operationId);

    expect(res.body).toMatchObject({ duplicate: false, status: "matched" });
    const eventId: string = res.body.eventId;
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("succeeded");
    expect(stored.resolution).toMatchObject({ outcome: "succeeded", via: "webhook", by: `webhook:${eventId}`, reason: `resolved by webhook ${eventId}`, fromState: "processing" });
    expect(stored.resultExpiresAt).not.toBeNull();
    expect(await event(eventId)).toMatchObject({ status: "matched", operationId: op.operationId, outcome: "succeeded", correlationValue: op.operationId });
    const resolved = await audits(op.operationId, "operation.resolved");
    expect(resolved).toHaveLength(1);
    expect(resolved[0]).toMatchObject({ actor: `webhook:${eventId}`, reason: `resolved by webhook ${eventId}` });
    // The attempt is still the agent's to close: nothing marked it lost.
    const attempt = await app.db.attempt.findFirstOrThrow({ where: { operationId: op.operationId } });
    expect(attempt.outcome).toBeNull();
  });

  it("the agent's later complete with the same outcome gets 200, and its result becomes the one every replay returns", async () => {
    const key = `idem-${randomUUID()}`;
    const op = await claimWithKey(key);
    await send("ticket.created", op.operationId);
    const settled = await operation(op.operationId);
    expect(settled.result).toEqual({ statusCode: null, body: null, resourceId: null });

    const result = { statusCode: 201, body: { ticket: "T-9" }, resourceId: "T-9" };
    const res = await complete(op, "succeeded", { result, provider: { requestId: "req_9" } });

    expect(res.status, res.text).toBe(200);
    expect(res.body.state).toBe("succeeded");
    const after = await operation(op.operationId);
    expect(after.flaggedAt).toBeNull();
    expect(after.resolution).toEqual(settled.resolution);
    expect(after.result).toEqual(result);
    const attempt = await app.db.attempt.findFirstOrThrow({ where: { operationId: op.operationId } });
    expect([attempt.outcome, attempt.provider]).toEqual(["succeeded", { requestId: "req_9" }]);
    expect(await audits(op.operationId, "operation.complete_agreed")).toMatchObject([{ after: { resultStored: true, result } }]);
    // An agent retrying the claim gets the stored outcome with the result, the same bytes every time.
    const replays = [await claimWithKey(key, 200), await claimWithKey(key, 200)];
    expect(replays[0]!.text).toBe(replays[1]!.text);
    expect(replays[0]!.body.result).toEqual(result);
    // The same complete again changes nothing.
    const again = await complete(op, "succeeded", { result, provider: { requestId: "req_9" } });
    expect(again.status, again.text).toBe(200);
    expect(await audits(op.operationId, "operation.complete_agreed")).toHaveLength(1);
  });

  it("once a replay was served, an agreeing complete's result is kept on the trace, not stored: replays stay byte-for-byte the same", async () => {
    const key = `idem-${randomUUID()}`;
    const op = await claimWithKey(key);
    await send("ticket.created", op.operationId);
    const before = await claimWithKey(key, 200);

    const result = { statusCode: 201, body: { ticket: "T-11" }, resourceId: "T-11" };
    const res = await complete(op, "succeeded", { result });

    expect(res.status, res.text).toBe(200);
    expect((await operation(op.operationId)).result).toEqual({ statusCode: null, body: null, resourceId: null });
    expect((await claimWithKey(key, 200)).text).toBe(before.text);
    expect(await audits(op.operationId, "operation.complete_agreed")).toMatchObject([{ after: { resultStored: false, result } }]);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    const end = trace?.timeline.find((e) => e.key === "attempt-1-end");
    expect(end?.json).toEqual([{ label: "Result reported", value: result }]);
  });

  // The guard above (no replay served yet) reads replay_count, which replays usually write without
  // waiting for the fsync: while a settled attempt may still report, they wait, so a crash cannot
  // lose the count of a replay already served (race probe, from the code).
  it("replays wait for their count to be durable only while an agreeing complete could still store its result", async () => {
    const key = `idem-${randomUUID()}`;
    const op = await claimWithKey(key);
    await send("ticket.created", op.operationId);
    expect(await replayCommitMode(op.operationId)).toBe("on");
    expect((await complete(op, "succeeded", { result: { statusCode: 201 } })).status).toBe(200);
    expect(await replayCommitMode(op.operationId)).toBe("off");
  });

  it("the attempt a webhook settled under a live lease may still report its effects' provider ids; a new effect gets 409 already-resolved", async () => {
    const op = await claimNew();
    expect((await putEffect(op, "create", "intended")).status).toBe(200);
    await send("ticket.created", op.operationId);

    const sent = await call(app.baseUrl, "PUT", `/api/v1/operations/${op.operationId}/side-effects/create`, {
      key: acme.agent,
      body: { fencingToken: op.token, provider: "tickets", state: "sent", providerRequestId: "req_1" },
    });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ state: "sent", providerRequestId: "req_1" });

    const another = await putEffect(op, "notify", "intended");
    expect([another.status, another.body.code], another.text).toEqual([409, "already-resolved"]);
    expect(another.body.detail).toContain("already resolved as succeeded");
    expect(await app.db.sideEffect.count({ where: { operationId: op.operationId } })).toBe(1);

    // Once the attempt completed, it is over: the usual lease-lost.
    expect((await complete(op, "succeeded")).status).toBe(200);
    const late = await putEffect(op, "create", "confirmed");
    expect([late.status, late.body.code], late.text).toEqual([409, "lease-lost"]);
  });

  it("the agent's later complete with a different outcome gets 409 already-resolved, and the conflict is flagged", async () => {
    const op = await claimNew();
    await send("ticket.rejected", op.operationId);
    expect((await operation(op.operationId)).state).toBe("failed");

    const res = await complete(op, "succeeded", { result: { statusCode: 201, resourceId: "T-10" } });

    expect([res.status, res.body.code], res.text).toEqual([409, "already-resolved"]);
    const after = await operation(op.operationId);
    expect(after.state).toBe("failed");
    expect(after.flaggedAt).not.toBeNull();
    expect(after.flagReason).toContain("reported succeeded");
    expect(await audits(op.operationId, "operation.complete_conflict")).toHaveLength(1);
    // The report ends its attempt (race probe: it stayed open forever, and every repeat flagged
    // and audited again); the same report repeated gets the same answer and nothing more.
    const attempt = await app.db.attempt.findFirstOrThrow({ where: { operationId: op.operationId } });
    expect(attempt.endedAt).not.toBeNull();
    expect(attempt.outcome).toBe("succeeded");
    expect(after.openAttemptUntil).toBeNull();
    const again = await complete(op, "succeeded", { result: { statusCode: 201, resourceId: "T-10" } });
    expect([again.status, again.body.code, again.body.detail], again.text).toEqual([409, "already-resolved", res.body.detail]);
    expect(await audits(op.operationId, "operation.complete_conflict")).toHaveLength(1);
    expect((await operation(op.operationId)).flaggedAt).toEqual(after.flaggedAt);
  });

  it("the attempt a webhook settled keeps its lease by heartbeats while it works, and its agreeing result is then stored", async () => {
    const op = await claimNew();
    await send("ticket.created", op.operationId);
    // Its first lease runs out while the tool still works; heartbeats carry it past the reaper.
    await app.db.$executeRaw`UPDATE operation SET open_attempt_until = now() - interval '1 second' WHERE id = ${op.operationId}`;
    const beat = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/heartbeat`, { key: acme.agent, body: { fencingToken: op.token } });
    expect(beat.status, beat.text).toBe(200);
    const after = await operation(op.operationId);
    expect(after.openAttemptUntil!.getTime()).toBeGreaterThan(Date.now() + 500_000);
    expect(await closeSettledAttempts({ db: app.db })).toBe(0);
    const result = { statusCode: 201, body: { ticket: "T-long" }, resourceId: "T-long" };
    expect((await complete(op, "succeeded", { result })).status).toBe(200);
    expect((await operation(op.operationId)).result).toEqual(result);
    // Once it completed, a heartbeat is the usual lease-lost.
    const late = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/heartbeat`, { key: acme.agent, body: { fencingToken: op.token } });
    expect([late.status, late.body.code], late.text).toEqual([409, "lease-lost"]);
  });

  it("an attempt a webhook settled under a live lease that never reports is ended by the lease reaper once its lease has run out", async () => {
    const op = await claimNew();
    expect((await putEffect(op, "create", "intended")).status).toBe(200);
    await send("ticket.created", op.operationId);
    const settled = await operation(op.operationId);
    expect(settled.state).toBe("succeeded");
    const open = await app.db.attempt.findFirstOrThrow({ where: { operationId: op.operationId } });
    expect(open.endedAt).toBeNull();
    expect(settled.openAttemptUntil?.getTime()).toBe(open.leaseExpiresAt?.getTime());

    // Before the lease runs out the reaper leaves it alone; afterwards (the agent crashed) it ends it.
    expect(await closeSettledAttempts({ db: app.db })).toBe(0);
    await app.db.$executeRaw`UPDATE operation SET open_attempt_until = now() - interval '1 second' WHERE id = ${op.operationId}`;
    await app.db.$executeRaw`UPDATE attempt SET lease_expires_at = now() - interval '1 second' WHERE id = ${open.id}`;
    expect(await closeSettledAttempts({ db: app.db })).toBe(1);
    expect(await closeSettledAttempts({ db: app.db })).toBe(0);

    const closed = await app.db.attempt.findUniqueOrThrow({ where: { id: open.id } });
    expect(closed).toMatchObject({ outcome: "lease_lost", error: { code: "lease-expired" } });
    expect(closed.endedAt).not.toBeNull();
    const after = await operation(op.operationId);
    expect(after).toMatchObject({ state: "succeeded", openAttemptUntil: null, result: settled.result });
    expect(await audits(op.operationId, "operation.attempt_lease_expired")).toMatchObject([{ actor: "system:lease-reaper" }]);
    // It reports nothing more: its effects are refused, and a late agreeing complete is
    // acknowledged but never becomes the stored result (a stale holder's).
    const effect = await call(app.baseUrl, "PUT", `/api/v1/operations/${op.operationId}/side-effects/create`, {
      key: acme.agent,
      body: { fencingToken: op.token, provider: "tickets", state: "sent" },
    });
    expect([effect.status, effect.body.code], effect.text).toEqual([409, "lease-lost"]);
    const late = await complete(op, "succeeded", { result: { statusCode: 201, body: { id: "T-late" } } });
    expect(late.status, late.text).toBe(200);
    expect((await operation(op.operationId)).result).toEqual(settled.result);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    // The trace ends the attempt (it said "lease expired without a report" forever), by the reaper.
    expect(trace?.timeline.filter((e) => e.kind === "attempt.lease-expired")).toEqual([]);
    expect(trace?.timeline.find((e) => e.kind === "attempt.end")).toMatchObject({ actor: { id: "system:lease-reaper" } });
  });

  it("settles a processing operation whose lease expired (named by its downstream key)", async () => {
    const op = await claimNew(acme, SHORT);
    await waitUntilLeaseExpired(app.db, op.operationId);

    const res = await send("ticket.rejected", op.downstreamKey);

    expect(res.body.status).toBe("matched");
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("failed");
    expect(stored.resolution).toMatchObject({ via: "webhook", fromState: "processing" });
    expect((await app.db.attempt.findFirstOrThrow({ where: { operationId: op.operationId } })).outcome).toBe("lease_lost");
    // Late complete after the expired lease, disagreeing: refused and flagged.
    const late = await complete(op, "succeeded");
    expect([late.status, late.body.code]).toEqual([409, "already-resolved"]);
  });
});

describe("a webhook after the agent's complete", () => {
  it("agreeing: the event is matched and the operation unchanged", async () => {
    const op = await claimNew();
    expect((await complete(op, "succeeded", { result: { statusCode: 201, resourceId: "T-1" } })).status).toBe(200);
    const before = await operation(op.operationId);

    const res = await send("ticket.created", op.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toEqual(before);
    expect(await audits(op.operationId, "operation.resolved")).toHaveLength(0);
  });

  it("contradicting: the event is kept as contradicting, the operation flagged but not changed", async () => {
    const op = await claimNew();
    expect((await complete(op, "succeeded", { result: { statusCode: 201, resourceId: "T-2" } })).status).toBe(200);
    const before = await operation(op.operationId);

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("contradicting");
    const after = await operation(op.operationId);
    expect([after.state, after.result, after.resolution]).toEqual([before.state, before.result, before.resolution]);
    expect(after.flaggedAt).not.toBeNull();
    expect(after.flagReason).toContain(res.body.eventId);
    expect(await event(res.body.eventId)).toMatchObject({ status: "contradicting", operationId: op.operationId, outcome: "failed" });
    const conflict = await audits(op.operationId, "operation.webhook_conflict");
    expect(conflict).toHaveLength(1);
    expect(conflict[0]!.actor).toBe(`webhook:${res.body.eventId}`);
  });
});

describe("a webhook about an operation waiting to retry", () => {
  // Its attempt reported failed (retryable): a provider that says succeeded contradicts that, and
  // the retry would run the tool a second time. The operation becomes unknown (no retry runs),
  // flagged, and the event waits in the inbox, where matching it settles the operation.
  async function pendingWithKey(key: string) {
    const op = await claimWithKey(key);
    const failed = await complete(op, "failed", { retryable: true, error: { code: "timeout", message: "no answer" } });
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body.state).toBe("pending");
    return op;
  }

  it("says succeeded: the operation becomes unknown, the retry is refused, and matching the event settles it", async () => {
    const key = `idem-${randomUUID()}`;
    const op = await pendingWithKey(key);
    const before = await operation(op.operationId);

    const res = await send("ticket.created", op.operationId);

    expect(res.body.status).toBe("contradicting");
    const after = await operation(op.operationId);
    expect(after.state).toBe("unknown");
    expect(after.notBefore).toBeNull();
    expect(after.flaggedAt).not.toBeNull();
    expect(after.flagReason).toContain(res.body.eventId);
    expect(after.error).toMatchObject({ code: "contradicting-reports" });
    const [became] = await audits(op.operationId, "operation.unknown");
    expect(became).toMatchObject({ actor: `webhook:${res.body.eventId}`, before: { state: "pending" }, after: { state: "unknown", eventId: res.body.eventId } });
    // The trace says what the event did, at the event: not "flagged, not applied", nor filed
    // under the attempt's failure that came before it (console review, 2026-12-01 night).
    const timeline = (await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId }))!.timeline;
    const webhook = timeline.find((e) => e.kind === "webhook")!;
    expect(webhook.title).toBe(
      "Webhook ticket.created from tickets says succeeded, but attempt 1 had reported failed (retryable): its outcome became unknown, no retry runs (flagged)",
    );
    expect(webhook.audit.map((a) => a.action)).toContain("operation.unknown");
    expect(timeline.find((e) => e.kind === "attempt.end")!.audit.map((a) => a.action)).not.toContain("operation.unknown");
    // Past the backoff, the same key is refused rather than run again.
    await new Promise((r) => setTimeout(r, Math.max(0, (before.notBefore?.getTime() ?? 0) - Date.now()) + 50));
    const retry = await claimWithKey(key, 409);
    expect(retry.body.code).toBe("outcome-unknown");
    expect(await app.db.attempt.count({ where: { operationId: op.operationId } })).toBe(1);
    const metricsText = (await Promise.all(app.servers.map((server) => call(server.baseUrl, "GET", "/api/metrics")))).map((m) => m.text).join("\n");
    expect(metricsText).toMatch(/tollgate_unknowns_total\{cause="webhook-contradicts-retry"\} [1-9]/);

    // An operator matches the event from the inbox: the operation is settled as the provider says.
    // (The inbox's route calls this; its HTTP side is in webhooks-inbox.test.ts.)
    const matched = await matchWebhookEvent({
      db: app.db,
      tenantId: acme.tenantId,
      eventId: res.body.eventId,
      input: { operationId: op.operationId, outcome: "succeeded", reason: "the provider's event", eventStatus: "contradicting" },
      actor: "user:operator@example.test",
    });
    expect(matched.state).toBe("succeeded");
    expect(await operation(op.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null });
    expect((await claimWithKey(key, 200)).headers.get("idempotent-replayed")).toBe("true");
  });

  it("a succeeded event naming its side effect confirms the effect and stops the retry too", async () => {
    const op = await pendingWithKeyAndEffect();
    const effect = await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId, name: "ticket" } });

    const res = await send("ticket.created", effect.downstreamKey);

    expect(res.body.status).toBe("contradicting");
    expect((await operation(op.operationId)).state).toBe("unknown");
    expect((await app.db.sideEffect.findUniqueOrThrow({ where: { id: effect.id } })).state).toBe("confirmed");
  });

  it("says failed: it agrees with the attempt's report; the retry stays scheduled", async () => {
    const op = await pendingWithKey(`idem-${randomUUID()}`);
    const before = await operation(op.operationId);

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toEqual(before);
  });

  // Review, 2026-12-02 (later): the echo rule looked only at attempts before a running one.
  it("says failed of the side effect it names while the retry waits: settles nothing, and the retry's own confirmation of the effect stands", async () => {
    const key = `idem-${randomUUID()}`;
    const first = await claimWithKey(key);
    expect((await putEffect(first, "ticket", "intended")).status).toBe(200);
    expect((await complete(first, "failed", { retryable: true, error: { code: "timeout", message: "no answer" } })).body.state).toBe("pending");
    const effect = await app.db.sideEffect.findFirstOrThrow({ where: { operationId: first.operationId, name: "ticket" } });
    const before = await operation(first.operationId);

    const res = await send("ticket.rejected", effect.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toEqual(before);
    expect((await app.db.sideEffect.findUniqueOrThrow({ where: { id: effect.id } })).state).toBe("intended");
    const [notApplied] = await audits(first.operationId, "operation.webhook_not_applied");
    expect(notApplied).toMatchObject({ after: { eventId: res.body.eventId, failedAttempt: 1, sideEffect: "ticket" } });
    expect(notApplied!.reason).toContain("already known; the operation stays pending");
    // The retry runs and its call goes through: its report of the shared effect is taken (it was 409 side-effect-backwards).
    await new Promise((r) => setTimeout(r, Math.max(0, (before.notBefore?.getTime() ?? 0) - Date.now()) + 50));
    const second = await claimWithKey(key);
    const confirmed = await putEffect(second, "ticket", "confirmed");
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await complete(second, "succeeded")).status).toBe(200);
    expect(await operation(first.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null });
  });

  it("says failed after a provider's succeeded made the operation unknown: the known failure's echo settles nothing, the succeeded event can still be matched", async () => {
    const op = await pendingWithKey(`idem-${randomUUID()}`);
    const succeeded = await send("ticket.created", op.operationId);
    expect((await operation(op.operationId)).state).toBe("unknown");

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toMatchObject({ state: "unknown", resolution: null });
    expect(await audits(op.operationId, "operation.webhook_not_applied")).toHaveLength(1);
    const matched = await matchWebhookEvent({
      db: app.db,
      tenantId: acme.tenantId,
      eventId: succeeded.body.eventId,
      input: { operationId: op.operationId, outcome: "succeeded", eventStatus: "contradicting" },
      actor: "user:operator@example.test",
    });
    expect(matched.state).toBe("succeeded");
  });

  // Review, 2026-12-02 (evening): the echo rule counted only attempts that reported failed
  // (retryable). Attempt 1's lease ran out after its charge was sent, and an operator sent the
  // operation back to retry: the provider's "failed" set the charge every attempt shares to
  // failed, and the retry's own confirmation of it was refused.
  it("says failed of the side effect it names after an operator's retry of a lost lease: settles nothing, and the retry's confirmation of the effect stands", async () => {
    const key = `idem-${randomUUID()}`;
    const body = { tool: RETRIED, args: { title: "Printer on fire" } };
    const claimed = await claim(app.baseUrl, acme.agent, key, body);
    expect(claimed.status, claimed.text).toBe(201);
    const first = { operationId: claimed.body.operationId, token: claimed.body.attempt.fencingToken, downstreamKey: claimed.body.downstreamKey };
    const charge = await putEffect(first, "charge", "sent");
    expect(charge.status, charge.text).toBe(200);
    await endLease(app.db, first.operationId);
    const lost = await claim(app.baseUrl, acme.agent, key, body);
    expect([lost.status, lost.body.code], lost.text).toEqual([409, "outcome-unknown"]);
    const retry = await call(app.baseUrl, "POST", `/api/v1/operations/${first.operationId}/resolve`, {
      key: acme.admin,
      body: { outcome: "retry", reason: "the provider shows nothing yet" },
    });
    expect([retry.status, retry.body.state], retry.text).toEqual([200, "pending"]);
    const before = await operation(first.operationId);

    const res = await send("ticket.rejected", charge.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toEqual(before);
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: first.operationId, name: "charge" } })).toMatchObject({ state: "sent" });
    const [notApplied] = await audits(first.operationId, "operation.webhook_not_applied");
    expect(notApplied).toMatchObject({ after: { eventId: res.body.eventId, failedAttempt: 1, earlierOutcome: "lease_lost", sideEffect: "charge" } });
    expect(notApplied!.reason).toContain("attempt 1 (its lease ran out, then an operator resolved retry) may have called the provider");
    // The retry's call goes through: its report of the shared effect is taken, its success stands.
    const again = await claim(app.baseUrl, acme.agent, key, body);
    expect([again.status, again.body.attempt?.number], again.text).toEqual([201, 2]);
    const second = { ...first, token: again.body.attempt.fencingToken };
    const confirmed = await putEffect(second, "charge", "confirmed");
    expect(confirmed.status, confirmed.text).toBe(200);
    const done = await complete(second, "succeeded");
    expect([done.status, done.body.state], done.text).toEqual([200, "succeeded"]);
    expect(await operation(first.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null });
  });

  async function pendingWithKeyAndEffect() {
    const op = await claimWithKey(`idem-${randomUUID()}`);
    // Intended only: an effect that may have gone out (sent) would make the failed report unknown itself.
    expect((await putEffect(op, "ticket", "intended")).status).toBe(200);
    const failed = await complete(op, "failed", { retryable: true, error: { code: "timeout", message: "no answer" } });
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body.state).toBe("pending");
    return op;
  }
});

describe("a webhook while a retry runs", () => {
  // Attempt 1 reported failed (retryable) and attempt 2 is running: both call the provider with
  // the operation's one downstream key, so an event cannot say which call it is about.
  async function retryRunning(tool = RETRIED): Promise<{ key: string; first: Claimed; second: Claimed }> {
    const key = `idem-${randomUUID()}`;
    const body = { tool, args: { title: "Printer on fire" } };
    const claimed = await claim(app.baseUrl, acme.agent, key, body);
    expect(claimed.status, claimed.text).toBe(201);
    const first = { operationId: claimed.body.operationId, token: claimed.body.attempt.fencingToken, downstreamKey: claimed.body.downstreamKey };
    expect((await complete(first, "failed", { retryable: true, error: { code: "http_503", message: "try later" } })).body.state).toBe("pending");
    await new Promise((r) => setTimeout(r, 20));
    const again = await claim(app.baseUrl, acme.agent, key, body);
    expect(again.status, again.text).toBe(201);
    expect(again.body.attempt.number).toBe(2);
    return { key, first, second: { ...first, token: again.body.attempt.fencingToken } };
  }

  it("says failed: it may be the word on attempt 1's call, already known, so it settles nothing and attempt 2's own success stands", async () => {
    const { first, second } = await retryRunning();

    const res = await send("ticket.rejected", first.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toMatchObject({ state: "processing", resolution: null, flaggedAt: null });
    const [notApplied] = await audits(first.operationId, "operation.webhook_not_applied");
    expect(notApplied).toMatchObject({ actor: `webhook:${res.body.eventId}`, after: { eventId: res.body.eventId, failedAttempt: 1 } });
    const timeline = (await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: first.operationId }))!.timeline;
    const entry = timeline.find((e) => e.kind === "webhook")!;
    expect(entry.title).toBe("Webhook ticket.rejected from tickets says failed, as attempt 1 had reported (retryable): it may be about that call, so it settled nothing (not applied)");
    expect(entry.tone).toBe("info");

    const done = await complete(second, "succeeded", { result: { body: { ticket: "T-2" } } });
    expect(done.status, done.text).toBe(200);
    expect(await operation(first.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null });
  });

  it("says failed after a takeover came between: still about a call that may be attempt 1's, so attempt 3 keeps running", async () => {
    const { key, first } = await retryRunning(RETRIED_DEDUPED);
    await endLease(app.db, first.operationId);
    const third = await claim(app.baseUrl, acme.agent, key, { tool: RETRIED_DEDUPED, args: { title: "Printer on fire" } });
    expect(third.body.attempt?.number, third.text).toBe(3);

    const res = await send("ticket.rejected", first.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toMatchObject({ state: "processing", resolution: null });
    expect((await audits(first.operationId, "operation.webhook_not_applied"))[0]).toMatchObject({ after: { failedAttempt: 1 } });
  });

  it("says failed of an operation whose retry's outcome became unknown: nothing is settled, the doubt stays for an operator", async () => {
    const { first, second } = await retryRunning();
    expect((await complete(second, "unknown", { error: { code: "timeout", message: "no answer" } })).body.state).toBe("unknown");

    const res = await send("ticket.rejected", first.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toMatchObject({ state: "unknown", resolution: null });
    expect(await audits(first.operationId, "operation.webhook_not_applied")).toHaveLength(1);
  });

  it("says failed of a side effect the retry announced again: the effect and the operation are left as they are", async () => {
    const { first, second } = await retryRunning();
    const announced = await putEffect(second, "ticket", "intended");
    expect(announced.status, announced.text).toBe(200);

    const res = await send("ticket.rejected", announced.body.downstreamKey as string);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toMatchObject({ state: "processing", resolution: null });
    expect((await app.db.sideEffect.findFirstOrThrow({ where: { operationId: first.operationId, name: "ticket" } })).state).toBe("intended");
    expect(await audits(first.operationId, "operation.webhook_not_applied")).toHaveLength(1);
  });

  // Review, 2026-12-02 (evening): an attempt that lost its lease may have called the provider as
  // much as one that reported failed (retryable); the event settled attempt 2's operation failed
  // under its live lease, and attempt 2's success was refused.
  it.each([
    { name: "an operator's retry", tool: RETRIED, earlier: "lease_lost" },
    { name: "a takeover", tool: RETRIED_DEDUPED, earlier: "taken_over" },
  ])("says failed while attempt 2 runs after attempt 1's lease ran out and $name: it may be about attempt 1's call, so it settles nothing", async ({ tool, earlier }) => {
    const key = `idem-${randomUUID()}`;
    const body = { tool, args: { title: "Printer on fire" } };
    const claimed = await claim(app.baseUrl, acme.agent, key, body);
    expect(claimed.status, claimed.text).toBe(201);
    const first = { operationId: claimed.body.operationId, token: claimed.body.attempt.fencingToken, downstreamKey: claimed.body.downstreamKey };
    await endLease(app.db, first.operationId);
    let again = await claim(app.baseUrl, acme.agent, key, body);
    if (earlier === "lease_lost") {
      expect([again.status, again.body.code], again.text).toEqual([409, "outcome-unknown"]);
      const retry = await call(app.baseUrl, "POST", `/api/v1/operations/${first.operationId}/resolve`, { key: acme.admin, body: { outcome: "retry", reason: "nothing at the provider" } });
      expect(retry.status, retry.text).toBe(200);
      again = await claim(app.baseUrl, acme.agent, key, body);
    }
    expect([again.status, again.body.attempt?.number], again.text).toEqual([201, 2]);
    const second = { ...first, token: again.body.attempt.fencingToken };

    const res = await send("ticket.rejected", first.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toMatchObject({ state: "processing", flaggedAt: null });
    expect((await audits(first.operationId, "operation.webhook_not_applied"))[0]).toMatchObject({ after: { failedAttempt: 1, earlierOutcome: earlier } });
    const timeline = (await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: first.operationId }))!.timeline;
    const how = earlier === "lease_lost" ? "attempt 1's lease ran out while it may have been making that call" : "attempt 1 was taken over while it may have been making that call";
    expect(timeline.find((e) => e.kind === "webhook")!.title).toBe(`Webhook ticket.rejected from tickets says failed, but ${how}: it may be about that call, so it settled nothing (not applied)`);
    const done = await complete(second, "succeeded", { result: { body: { ticket: "T-2" } } });
    expect([done.status, done.body.state], done.text).toEqual([200, "succeeded"]);
    expect(await operation(first.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null });
  });

  it("says succeeded: it settles the operation, whichever call acted, and attempt 2's agreeing complete is 200", async () => {
    const { first, second } = await retryRunning();

    const res = await send("ticket.created", first.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(first.operationId)).toMatchObject({ state: "succeeded", resolution: { via: "webhook" } });
    expect((await complete(second, "succeeded")).status).toBe(200);
  });
});

// Webhook review, 2026-12-01: "failed" about an operation awaiting approval was taken as agreeing
// (matched, never in the inbox, and the approval then ran the tool), and "succeeded" about an
// approved one made it unknown, blaming a failed "attempt 0" that never was.
// tollgate_unknowns_total by cause, summed over the app's instances (each counts its own).
async function unknownsByCause(): Promise<Record<string, number>> {
  const texts = await Promise.all(app.servers.map((server) => call(server.baseUrl, "GET", "/api/metrics")));
  const sums: Record<string, number> = {};
  for (const { text } of texts) {
    for (const [, cause, n] of text.matchAll(/^tollgate_unknowns_total\{cause="([^"]+)"\} (\d+)$/gm)) sums[cause!] = (sums[cause!] ?? 0) + Number(n);
  }
  return sums;
}

describe("a webhook about an operation that has not run yet", () => {
  const APPROVED = "tickets.approved";
  let approvalKey = "";
  beforeAll(async () => {
    await putTool(acme, APPROVED, { approval: "required", leaseSeconds: 600 });
  });

  async function awaitingApproval(): Promise<{ operationId: string; approvalId: string; key: string }> {
    approvalKey = `idem-${randomUUID()}`;
    const res = await claim(app.baseUrl, acme.agent, approvalKey, { tool: APPROVED, args: { title: "Refund" } });
    expect(res.status, res.text).toBe(202);
    return { operationId: res.body.operationId, approvalId: res.body.approval.id, key: approvalKey };
  }

  it.each(["ticket.rejected", "ticket.created"])("awaiting approval, %s: contradicting, in the inbox, the operation flagged and left as it is", async (type) => {
    const op = await awaitingApproval();

    const res = await send(type, op.operationId);

    expect(res.body.status).toBe("contradicting");
    expect(await event(res.body.eventId)).toMatchObject({ status: "contradicting", operationId: op.operationId });
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("awaiting_approval");
    expect(stored.flagReason).toBe(`webhook ${res.body.eventId} (${type}) says ${type === "ticket.created" ? "succeeded" : "failed"}, but the operation has not run yet (awaiting approval)`);
    expect((await audits(op.operationId, "operation.webhook_conflict")).map((a) => a.reason)).toEqual(["a provider webhook about an operation that has not run yet; not applied"]);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    expect(trace!.timeline.map((e) => e.title)).toContain(
      `Webhook ${type} from tickets says ${type === "ticket.created" ? "succeeded" : "failed"}, but the operation had not run yet (flagged, not applied)`,
    );
  });

  it("approved and not yet claimed, succeeded: someone acted without an attempt, so the operation becomes unknown and the claim does not run it", async () => {
    const op = await awaitingApproval();
    const decided = await call(app.baseUrl, "POST", `/api/v1/approvals/${op.approvalId}/decision`, { key: acme.approver, body: { decision: "approve" } });
    expect(decided.status, decided.text).toBe(200);
    const unknownsBefore = await unknownsByCause();

    const res = await send("ticket.created", op.operationId);

    expect(res.body.status).toBe("contradicting");
    // Counted as what it is: nothing had been retried (it was counted as webhook-contradicts-retry).
    const unknownsAfter = await unknownsByCause();
    expect(unknownsAfter["webhook-before-run"] ?? 0).toBe((unknownsBefore["webhook-before-run"] ?? 0) + 1);
    expect(unknownsAfter["webhook-contradicts-retry"] ?? 0).toBe(unknownsBefore["webhook-contradicts-retry"] ?? 0);
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({
      state: "unknown",
      attemptCount: 0,
      flagReason: `webhook ${res.body.eventId} (ticket.created) says succeeded, but the operation has not run yet (approved, not yet claimed)`,
      error: { code: "contradicting-reports", message: expect.stringContaining("says succeeded, but no attempt of the operation had run") },
    });
    const claimed = await claim(app.baseUrl, acme.agent, op.key, { tool: APPROVED, args: { title: "Refund" } });
    expect([claimed.status, claimed.body.code], claimed.text).toEqual([409, "outcome-unknown"]);
    expect(await app.db.attempt.count({ where: { operationId: op.operationId } })).toBe(0);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    expect(trace!.timeline.map((e) => e.title)).toContain("Webhook ticket.created from tickets says succeeded, but the operation had not run yet: its outcome became unknown (flagged)");
    // Matching the event in the inbox settles it as succeeded: the provider's effect stands.
    const matched = await matchWebhookEvent({ db: app.db, tenantId: acme.tenantId, eventId: res.body.eventId, input: { operationId: op.operationId, outcome: "succeeded" }, actor: "user:ops@example.com" });
    expect(matched.state).toBe("succeeded");
  });

  // Review, 2026-12-02 (later): webhooks arrive in any order; a later "failed" settled it as failed.
  it("approved and not yet claimed, succeeded then failed: the failed event contradicts, the operation stays unknown for an operator", async () => {
    const op = await awaitingApproval();
    expect((await call(app.baseUrl, "POST", `/api/v1/approvals/${op.approvalId}/decision`, { key: acme.approver, body: { decision: "approve" } })).status).toBe(200);
    expect((await send("ticket.created", op.operationId)).body.status).toBe("contradicting");
    expect((await operation(op.operationId)).state).toBe("unknown");

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("contradicting");
    expect(await operation(op.operationId)).toMatchObject({ state: "unknown", resolution: null, flagReason: expect.stringContaining(res.body.eventId) });
    const claimed = await claim(app.baseUrl, acme.agent, op.key, { tool: APPROVED, args: { title: "Refund" } });
    expect([claimed.status, claimed.body.code], claimed.text).toEqual([409, "outcome-unknown"]);
  });

  // Review, 2026-12-02 (evening): a rejected operation never ran, and "failed" about it was
  // matched as agreeing (tollgate_effective_outcome('rejected') is failed), out of the inbox.
  it("rejected at approval, failed: contradicting, in the inbox, flagged and left rejected; the inbox's match refuses it", async () => {
    const op = await awaitingApproval();
    const rejected = await call(app.baseUrl, "POST", `/api/v1/approvals/${op.approvalId}/decision`, { key: acme.approver, body: { decision: "reject", reason: "not today" } });
    expect([rejected.status, rejected.body.operationState], rejected.text).toEqual([200, "rejected"]);

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("contradicting");
    expect(await event(res.body.eventId)).toMatchObject({ status: "contradicting", operationId: op.operationId });
    expect(await operation(op.operationId)).toMatchObject({
      state: "rejected",
      attemptCount: 0,
      flagReason: `webhook ${res.body.eventId} (ticket.rejected) says failed, but the operation never ran (rejected)`,
    });
    expect((await audits(op.operationId, "operation.webhook_conflict")).map((a) => a.reason)).toEqual([
      "a provider webhook about an operation that was rejected and never ran; not applied",
    ]);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    expect(trace!.timeline.map((e) => e.title)).toContain("Webhook ticket.rejected from tickets says failed, but the operation had not run yet (flagged, not applied)");
    const refused = await matchWebhookEvent({
      db: app.db,
      tenantId: acme.tenantId,
      eventId: res.body.eventId,
      input: { operationId: op.operationId, outcome: "failed", eventStatus: "contradicting" },
      actor: "user:ops@example.com",
    }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "invalid-state", message: expect.stringContaining("was rejected and never ran") });
    expect(await event(res.body.eventId)).toMatchObject({ status: "contradicting" });
  });

  it("approved and not yet claimed, failed: flagged and left pending; the agent's claim runs it", async () => {
    const op = await awaitingApproval();
    expect((await call(app.baseUrl, "POST", `/api/v1/approvals/${op.approvalId}/decision`, { key: acme.approver, body: { decision: "approve" } })).status).toBe(200);

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("contradicting");
    expect(await operation(op.operationId)).toMatchObject({ state: "pending", attemptCount: 0, error: null, flagReason: expect.stringContaining("has not run yet (approved, not yet claimed)") });
    const claimed = await claim(app.baseUrl, acme.agent, op.key, { tool: APPROVED, args: { title: "Refund" } });
    expect([claimed.status, claimed.body.attempt?.number], claimed.text).toEqual([201, 1]);
  });
});

describe("a webhook for an unknown outcome", () => {
  it("settles it (by downstream key), and claims of the same key then replay the outcome", async () => {
    const idem = `idem-${randomUUID()}`;
    const claimed = await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args: { n: 1 } });
    const op = { operationId: claimed.body.operationId, token: claimed.body.attempt.fencingToken, downstreamKey: claimed.body.downstreamKey };
    expect((await complete(op, "unknown", { error: { code: "timeout", message: "provider timed out" } })).status).toBe(200);
    expect((await operation(op.operationId)).state).toBe("unknown");

    const res = await send("ticket.created", op.downstreamKey);

    expect(res.body.status).toBe("matched");
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("succeeded");
    expect(stored.resolution).toMatchObject({ via: "webhook", fromState: "unknown", by: `webhook:${res.body.eventId}` });
    const replay = await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args: { n: 1 } });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("a connection changed through another instance", () => {
  it("a delivery the cached connection refuses is checked once more against a fresh read: a wider tolerance set through instance A holds on instance B at once", async () => {
    const [a, b] = app.servers.map((s) => s.baseUrl) as [string, string];
    const own = newStandardSecret();
    const { connectionId: id } = await createConnection(a, acme.admin, "tolerance-change", { scheme: "standard-webhooks", secrets: [own], toleranceSeconds: 300 });
    // Instance B caches the connection (tolerance 300 s).
    expect((await deliver(b, id, signStandard(own, ticketEvent("ticket.created", null)))).status).toBe(200);

    const widened = await call(a, "PUT", "/api/v1/webhook-connections/tolerance-change", {
      key: acme.admin,
      body: { scheme: "standard-webhooks", toleranceSeconds: 900, correlation: { path: "data.metadata.tollgate_operation" }, outcomes: {} },
    });
    expect(widened.status, widened.text).toBe(200);

    const late = await deliver(b, id, signStandard(own, ticketEvent("ticket.created", null), { at: Math.floor(Date.now() / 1000) - 600 }));
    expect(late.status, late.text).toBe(200);
  });
});

describe("what else names an operation", () => {
  // Under a live lease the event confirms the call it names, and no more (review, 2026-12-02
  // evening: it settled the operation, being its only effect on record so far; see below).
  it("a side effect's own downstream key (the key its provider saw) names the side effect's operation", async () => {
    const op = await claimNew();
    const effect = await putEffect(op, "create-ticket", "intended");
    expect(effect.status, effect.text).toBe(200);
    expect(effect.body.downstreamKey).not.toBe(op.downstreamKey);

    const res = await send("ticket.created", effect.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await event(res.body.eventId)).toMatchObject({ operationId: op.operationId });
    expect((await operation(op.operationId)).state).toBe("processing");
    // The evidence is recorded on the call it names.
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId } })).toMatchObject({ state: "confirmed" });
    const [recorded] = await audits(op.operationId, "side_effect.confirmed");
    expect(recorded).toMatchObject({ actor: `webhook:${res.body.eventId}`, reason: `reported by webhook ${res.body.eventId}` });
  });

  // Review, 2026-12-02 (evening): a tool records each intent right before each call, so under a
  // live lease the call an event names may be the only one on record yet. Settling the operation
  // from it refused the next call's intent (409 already-resolved): the email was never sent, and
  // every replay said succeeded.
  it("an event about the only side effect recorded so far, under a live lease, confirms that call only: the tool's next call goes ahead and its complete decides", async () => {
    const op = await claimNew();
    const charge = await putEffect(op, "charge", "sent");
    expect(charge.status, charge.text).toBe(200);

    const res = await send("ticket.created", charge.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toMatchObject({ state: "processing", resolution: null });
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId, name: "charge" } })).toMatchObject({ state: "confirmed" });
    const email = await putEffect(op, "email", "intended");
    expect(email.status, email.text).toBe(200);
    expect((await putEffect(op, "email", "confirmed")).status).toBe(200);
    const done = await complete(op, "succeeded", { result: { body: { charged: true, emailed: true } } });
    expect([done.status, done.body.state], done.text).toEqual([200, "succeeded"]);
    expect(await operation(op.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null, resolution: null });
  });

  it("the same event about the only call under a live lease, saying failed: the call fails, the agent's failed complete settles it", async () => {
    const op = await claimNew();
    const charge = await putEffect(op, "charge", "sent");

    const res = await send("ticket.rejected", charge.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toMatchObject({ state: "processing", resolution: null });
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId, name: "charge" } })).toMatchObject({ state: "failed" });
    const done = await complete(op, "failed", { error: { code: "card_declined", message: "declined" } });
    expect([done.status, done.body.state], done.text).toEqual([200, "failed"]);
  });

  // Once no attempt can start a call, the only side effect's provider speaks for the operation.
  it.each([
    { name: "unknown", end: "unknown" },
    { name: "processing, its lease run out", end: "lease" },
  ])("an event about the operation's only side effect settles it when no attempt can still start calls ($name)", async ({ end }) => {
    const op = await claimNew();
    const charge = await putEffect(op, "charge", "sent");
    if (end === "unknown") expect((await complete(op, "unknown")).body.state).toBe("unknown");
    else await endLease(app.db, op.operationId);

    const res = await send("ticket.created", charge.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toMatchObject({ state: "succeeded", resolution: { via: "webhook", by: `webhook:${res.body.eventId}` } });
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId, name: "charge" } })).toMatchObject({ state: "confirmed" });
  });

  // Last read, 2026-12-02: a lease that ran out under takeover `deduplicated` with attempts left
  // is taken over by the next claim, which goes on to the calls the first attempt never made.
  it("an event about the only side effect under a lapsed lease that a takeover will resume confirms that call only", async () => {
    const op = await claimNew(acme, RETRIED_DEDUPED);
    const charge = await putEffect(op, "charge", "sent");
    await endLease(app.db, op.operationId);

    const res = await send("ticket.created", charge.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toMatchObject({ state: "processing", resolution: null });
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId, name: "charge" } })).toMatchObject({ state: "confirmed" });
  });

  // Review, 2026-12-03: whether a takeover will resume counts the attempts left by the operation's
  // own limit (copied when it was made), as the claim and the reaper do, not the tool's current one.
  it.each([
    { change: "lowered to 1 after the claim", made: 4, now: 1, settles: false },
    { change: "raised to 4 after the claim", made: 1, now: 4, settles: true },
  ])("the tool's maxAttempts $change: the operation's own limit decides whether the event settles it", async ({ made, now, settles }) => {
    const tool = `tickets.limit-${made}-${now}`;
    await putTool(acme, tool, { leaseSeconds: 600, takeover: "deduplicated", maxAttempts: made });
    const op = await claimNew(acme, tool);
    const charge = await putEffect(op, "charge", "sent");
    await putTool(acme, tool, { leaseSeconds: 600, takeover: "deduplicated", maxAttempts: now });
    await endLease(app.db, op.operationId);

    const res = await send("ticket.created", charge.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId, name: "charge" } })).toMatchObject({ state: "confirmed" });
    if (settles) {
      // One attempt allowed and used: no takeover will come, and the event says the only call happened.
      expect(await operation(op.operationId)).toMatchObject({ state: "succeeded", resolution: { via: "webhook" } });
    } else {
      // Attempts left: the next claim takes over and makes the calls attempt 1 never made.
      expect(await operation(op.operationId)).toMatchObject({ state: "processing", resolution: null });
    }
  });

  // Review, 2026-12-01: a fast provider's webhook lands before the agent reports `sent`; that
  // report was 409 side-effect-backwards, and the provider's request id was never stored.
  it("the agent's sent, after the provider's event confirmed the call: 200, its request id recorded, the call stays confirmed", async () => {
    const op = await claimNew();
    const effect = await putEffect(op, "create-ticket", "intended");
    expect((await send("ticket.created", effect.body.downstreamKey)).body.status).toBe("matched");

    const sent = await call(app.baseUrl, "PUT", `/api/v1/operations/${op.operationId}/side-effects/create-ticket`, {
      key: acme.agent,
      body: { fencingToken: op.token, provider: "tickets", state: "sent", providerRequestId: "req_late" },
    });

    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ state: "confirmed", providerRequestId: "req_late" });
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId } })).toMatchObject({ state: "confirmed", providerRequestId: "req_late" });
    expect((await complete(op, "succeeded", { result: { statusCode: 201 } })).status).toBe(200);
  });

  it("an event about one of several side effects confirms that call only: the operation is left to its agent", async () => {
    const op = await claimNew();
    const ticket = await putEffect(op, "create-ticket", "sent");
    await putEffect(op, "notify-owner", "intended");

    const res = await send("ticket.created", ticket.body.downstreamKey);

    expect(res.body.status).toBe("matched");
    expect((await operation(op.operationId)).state).toBe("processing");
    const effects = await app.db.sideEffect.findMany({ where: { operationId: op.operationId }, orderBy: { name: "asc" } });
    expect(effects.map((e) => [e.name, e.state])).toEqual([
      ["create-ticket", "confirmed"],
      ["notify-owner", "intended"],
    ]);
    // The trace says what it settled: the call, not the operation (it said "agrees with the outcome").
    const titles = async () => (await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId }))!.timeline.map((e) => e.title);
    expect(await titles()).toContain("Webhook ticket.created from tickets · side effect create-ticket confirmed by its provider");
    // The agent's own complete still decides the operation.
    expect((await complete(op, "succeeded")).status).toBe(200);
    expect((await operation(op.operationId)).state).toBe("succeeded");
  });

  // The same two reports in the other order (the agent's succeeded, then the provider's failed
  // about one effect) contradict the settled operation and flag it; in this order the success
  // was applied without a word (left in the 2026-12-01 evening closing note).
  it("the agent's succeeded after a provider said one of its side effects failed is applied and flagged; a call the agent itself recorded failed is not", async () => {
    const op = await claimNew();
    const ticket = await putEffect(op, "create-ticket", "sent");
    await putEffect(op, "notify-owner", "sent");
    const res = await send("ticket.rejected", ticket.body.downstreamKey);
    expect(res.body.status).toBe("matched");
    expect((await operation(op.operationId)).state).toBe("processing");

    const done = await complete(op, "succeeded");

    expect([done.status, done.body.state], done.text).toEqual([200, "succeeded"]);
    const stored = await operation(op.operationId);
    expect(stored.flaggedAt).not.toBeNull();
    const says = `webhook ${res.body.eventId} (ticket.rejected) says side effect create-ticket failed`;
    expect(stored.flagReason).toBe(`attempt 1 reported succeeded, but ${says}`);
    expect(await audits(op.operationId, "operation.completed")).toMatchObject([
      { after: { state: "succeeded" }, reason: `the agent reported succeeded, but ${says}: flagged for an operator` },
    ]);

    const own = await claimNew();
    expect((await putEffect(own, "create-ticket", "failed")).status).toBe(200);
    await putEffect(own, "notify-owner", "sent");
    expect((await complete(own, "succeeded")).status).toBe(200);
    expect(await operation(own.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null, flagReason: null });
  });

  it("against a settled operation an effect's event is judged like any other, however many effects it has: success under a failure is contradicting", async () => {
    const op = await claimNew();
    const ticket = await putEffect(op, "create-ticket", "intended");
    await putEffect(op, "notify-owner", "intended");
    expect((await complete(op, "failed")).body.state).toBe("failed");

    const res = await send("ticket.created", ticket.body.downstreamKey);

    expect(res.body.status).toBe("contradicting");
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("failed");
    expect(stored.flaggedAt).not.toBeNull();
    const effects = await app.db.sideEffect.findMany({ where: { operationId: op.operationId }, orderBy: { name: "asc" } });
    expect(effects.map((e) => e.state)).toEqual(["intended", "intended"]);
  });

  it("an event that contradicts the final state of the side effect it names is contradicting: flagged, nothing applied", async () => {
    const op = await claimNew();
    const failed = await putEffect(op, "create-ticket", "failed");
    expect(failed.status, failed.text).toBe(200);

    const res = await send("ticket.created", failed.body.downstreamKey);

    expect(res.body.status).toBe("contradicting");
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("processing");
    expect(stored.flagReason).toBe(`webhook ${res.body.eventId} (ticket.created) says succeeded, but side effect create-ticket is failed`);
    expect(await app.db.sideEffect.findFirstOrThrow({ where: { operationId: op.operationId } })).toMatchObject({ state: "failed" });
    expect(await audits(op.operationId, "operation.webhook_conflict")).toHaveLength(1);
  });

  // API review: an event that named the operation and said failed settled it as failed although
  // its side effects were sent, a promise to every retry that nothing happened; an agent's
  // failed is turned into unknown in that case (tollgate_complete).
  it.each([
    { name: "processing", unknownFirst: false },
    { name: "unknown", unknownFirst: true },
  ])("a failed event about an operation whose side effects may have happened ($name) is contradicting: flagged, not applied, left for an operator", async ({ unknownFirst }) => {
    const op = await claimNew();
    expect((await putEffect(op, "create-ticket", "sent")).status).toBe(200);
    expect((await putEffect(op, "notify-owner", "intended")).status).toBe(200);
    if (unknownFirst) expect((await complete(op, "unknown")).status).toBe(200);
    const before = await operation(op.operationId);

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("contradicting");
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({ state: before.state, result: before.result, resolution: null });
    expect(stored.flagReason).toBe(`webhook ${res.body.eventId} (ticket.rejected) says failed, but side effects may have happened (create-ticket: sent)`);
    expect(await audits(op.operationId, "operation.webhook_conflict")).toMatchObject([
      { actor: `webhook:${res.body.eventId}`, before: { sideEffects: "create-ticket: sent" }, after: { eventId: res.body.eventId, reportedOutcome: "failed" } },
    ]);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    expect(trace?.timeline.find((e) => e.kind === "webhook")).toMatchObject({
      tone: "bad",
      title: "Webhook ticket.rejected from tickets says failed, but side effects may have happened (flagged, not applied)",
      fields: expect.arrayContaining([expect.objectContaining({ label: "Side effects that may have happened", value: "create-ticket: sent" })]),
    });
    // An operator who checked may still settle it as failed: matching the event from the inbox,
    // or resolving the operation. Either decision answers the flag (it needed a second clear).
    if (unknownFirst) {
      const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, {
        key: acme.admin,
        body: { outcome: "failed", reason: "checked: the ticket system has nothing" },
      });
      expect(resolved.status, resolved.text).toBe(200);
      expect(await audits(op.operationId, "operation.resolved")).toMatchObject([{ before: { flagReason: stored.flagReason } }]);
    } else {
      const matched = await app.db.$queryRaw<{ r: { code: string; op: { state: string } } }[]>`
        SELECT tollgate_webhook_match(${acme.tenantId}, ${res.body.eventId}, ${op.operationId}, 'failed', 'checked: the ticket system has nothing', 'user:ops@example.test') AS r`;
      expect(matched[0]?.r).toMatchObject({ code: "matched", op: { state: "failed" } });
      expect(await audits(res.body.eventId, "webhook_event.matched")).toMatchObject([{ after: { clearedFlag: stored.flagReason } }]);
    }
    expect(await operation(op.operationId)).toMatchObject({ state: "failed", flaggedAt: null, flagReason: null });
  });

  it("a failed event about an operation whose side effects all failed or never went out settles it as failed", async () => {
    const op = await claimNew();
    expect((await putEffect(op, "create-ticket", "failed")).status).toBe(200);
    expect((await putEffect(op, "notify-owner", "intended")).status).toBe(200);

    const res = await send("ticket.rejected", op.operationId);

    expect(res.body.status).toBe("matched");
    expect(await operation(op.operationId)).toMatchObject({ state: "failed", flaggedAt: null });
  });

  it("settling as succeeded keeps the provider resource id the attempt reported with its unknown outcome", async () => {
    const op = await claimNew();
    const unknown = await complete(op, "unknown", { provider: { requestId: "req_7", resourceId: "T-777" }, result: { statusCode: 504, body: { error: "gateway timeout" } } });
    expect(unknown.status, unknown.text).toBe(200);

    await send("ticket.created", op.operationId);

    const stored = await operation(op.operationId);
    // The timeout's 504 was what the unknown report saw, not the success's result (protocol review, 2026-12-01).
    expect(stored.result).toEqual({ statusCode: null, body: null, resourceId: "T-777" });
    expect(stored.resolution).toMatchObject({ resourceId: "T-777", via: "webhook" });
  });

  // Review, 2026-12-01: the result's JSON null won over the resource id an earlier attempt
  // reported, while the resolution named it: the two disagreed.
  it("a later attempt's report without a resource id does not hide the one an earlier attempt reported", async () => {
    await putTool(acme, "tickets.retried", { leaseSeconds: 600, takeover: "never", maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const key = `idem-${randomUUID()}`;
    const first = await claim(app.baseUrl, acme.agent, key, { tool: "tickets.retried", args: { title: "x" } });
    expect(first.status, first.text).toBe(201);
    const op1 = { operationId: first.body.operationId, token: first.body.attempt.fencingToken, downstreamKey: first.body.downstreamKey };
    expect((await complete(op1, "failed", { retryable: true, provider: { resourceId: "R1" } })).status).toBe(200);
    let second: Reply;
    do second = await claim(app.baseUrl, acme.agent, key, { tool: "tickets.retried", args: { title: "x" } });
    while (second.status === 429);
    expect(second.status, second.text).toBe(201);
    expect((await complete({ ...op1, token: second.body.attempt.fencingToken }, "unknown", { result: { statusCode: 504 } })).status).toBe(200);

    await send("ticket.created", op1.operationId);

    const stored = await operation(op1.operationId);
    expect(stored.result).toEqual({ statusCode: null, body: null, resourceId: "R1" });
    expect(stored.resolution).toMatchObject({ resourceId: "R1" });
  });
});

describe("events that wait in the inbox", () => {
  it("naming another tenant's operation: unmatched, and that operation is untouched", async () => {
    const foreign = await claimNew(globex);
    const before = await operation(foreign.operationId);

    for (const value of [foreign.operationId, foreign.downstreamKey]) {
      const res = await send("ticket.created", value);
      expect(res.body.status).toBe("unmatched");
      expect(await event(res.body.eventId)).toMatchObject({ status: "unmatched", operationId: null, tenantId: acme.tenantId, correlationValue: value });
    }
    expect(await operation(foreign.operationId)).toEqual(before);
  });

  it("naming nothing known, or without the correlation field: unmatched", async () => {
    expect((await send("ticket.created", "op_does_not_exist")).body.status).toBe("unmatched");
    const res = await send("ticket.created", null);
    expect(res.body.status).toBe("unmatched");
    expect((await event(res.body.eventId)).correlationValue).toBeNull();
  });

  // Webhook review, 2026-12-01: an object at the path was kept as its JSON text, at any length,
  // a copy of the payload that outlived its retention.
  it("keeps as correlation value only a string or number of at most 500 characters", async () => {
    const at = (value: unknown) => deliver(app.baseUrl, connectionId, signStandard(secret, { type: "ticket.created", data: { metadata: { tollgate_operation: value } } }));
    const cases: [unknown, string | null][] = [
      [{ email: "jane@example.com", ssn: "123-45-6789" }, null],
      [["op_1", "op_2"], null],
      ["x".repeat(501), null],
      ["", null],
      [true, null],
      [4242, "4242"],
      ["y".repeat(500), "y".repeat(500)],
    ];
    for (const [value, kept] of cases) {
      const res = await at(value);
      expect([res.status, res.body.status], res.text).toEqual([200, "unmatched"]);
      expect((await event(res.body.eventId)).correlationValue, JSON.stringify(value).slice(0, 40)).toBe(kept);
    }
  });

  it("with an event type that maps to no outcome: unmapped, tied to the operation, which is untouched", async () => {
    const op = await claimNew();
    const before = await operation(op.operationId);

    const res = await send("ticket.updated", op.operationId);

    expect(res.body.status).toBe("unmapped");
    expect(await event(res.body.eventId)).toMatchObject({ status: "unmapped", operationId: op.operationId, outcome: null });
    expect(await operation(op.operationId)).toEqual(before);
  });
});

describe("a long event type", () => {
  it("longer than any outcome key: stored cut and marked, and unmapped although its first 200 characters are a mapped type", async () => {
    const mapped = `ticket.created.${"x".repeat(185)}`;
    expect(mapped).toHaveLength(200);
    const put = await call(app.baseUrl, "PUT", "/api/v1/webhook-connections/long-types", {
      key: acme.admin,
      body: { scheme: "standard-webhooks", secrets: [secret], correlation: { path: "data.metadata.tollgate_operation" }, outcomes: { [mapped]: "succeeded" } },
    });
    expect(put.status, put.text).toBe(201);
    const op = await claimNew();

    const res = await deliver(app.baseUrl, put.body.connectionId, signStandard(secret, ticketEvent(`${mapped}.reverted`, op.operationId)));

    expect([res.status, res.body.status], res.text).toEqual([200, "unmapped"]);
    expect((await event(res.body.eventId)).eventType).toBe(`${mapped}…`);
    expect((await operation(op.operationId)).state).toBe("processing");
    // The cut never leaves half of a surrogate pair.
    const emoji = await deliver(app.baseUrl, put.body.connectionId, signStandard(secret, ticketEvent(`${"a".repeat(199)}😀`, null)));
    expect((await event(emoji.body.eventId)).eventType).toBe(`${"a".repeat(199)}…`);
  });
});

describe("duplicates", () => {
  it("20 concurrent deliveries of one event over two instances: one stored event, one resolution, 19 duplicates", async () => {
    const op = await claimNew();
    const signed = signStandard(secret, ticketEvent("ticket.created", op.operationId));

    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => deliver(app.servers[i % 2]!.baseUrl, connectionId, signed)),
    );

    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    const fresh = replies.filter((r) => r.body.duplicate === false);
    expect(fresh).toHaveLength(1);
    expect(replies.filter((r) => r.body.duplicate === true)).toHaveLength(19);
    for (const r of replies) expect(r.body.eventId).toBe(fresh[0]!.body.eventId);
    expect(await app.db.webhookEvent.count({ where: { connectionId, providerEventId: signed.id } })).toBe(1);
    expect(await audits(op.operationId, "operation.resolved")).toHaveLength(1);
    expect((await operation(op.operationId)).state).toBe("succeeded");
  });

  it("a redelivery later, even with a changed body, answers 200 { duplicate: true } and acts no more", async () => {
    const op = await claimNew();
    const first = await send("ticket.created", op.operationId, { id: "msg_redelivered" });
    const settled = await operation(op.operationId);

    const again = await send("ticket.rejected", op.operationId, { id: "msg_redelivered" });

    expect(again.body).toEqual({ duplicate: true, eventId: first.body.eventId });
    expect(await operation(op.operationId)).toEqual(settled);
  });

  it("an event id longer than the column holds is stored under its digest, settles, and its redelivery is a duplicate", async () => {
    const op = await claimNew();
    const longId = `msg_${"x".repeat(300)}`;

    const first = await send("ticket.created", op.operationId, { id: longId });
    const again = await send("ticket.created", op.operationId, { id: longId });

    expect(first.body.status).toBe("matched");
    expect((await event(first.body.eventId)).providerEventId).toMatch(/^id-sha256:[0-9a-f]{64}$/);
    expect((await operation(op.operationId)).state).toBe("succeeded");
    expect(again.body).toEqual({ duplicate: true, eventId: first.body.eventId });
  });
});

describe("payload retention", () => {
  it("prunes payloads past the connection's retention; the event row and its match survive; `tollgate prune` does it too", async () => {
    const op = await claimNew();
    const old = await send("ticket.created", op.operationId);
    const recent = await send("ticket.created", null);
    await app.db.$executeRaw`UPDATE webhook_event SET received_at = now() - interval '31 days' WHERE id = ${old.body.eventId}`;

    const pruned = await pruneWebhookPayloads(app.db);

    expect(pruned).toBe(1);
    const kept = await event(old.body.eventId);
    expect(kept).toMatchObject({ payload: null, status: "matched", operationId: op.operationId, outcome: "succeeded", correlationValue: op.operationId });
    expect(kept.payloadPrunedAt).not.toBeNull();
    expect((await event(recent.body.eventId)).payload).not.toBeNull();
    expect(await pruneWebhookPayloads(app.db)).toBe(0);

    // The correlation value is payload too: it goes with it, unless it is one of Tollgate's own
    // names of the operation the event is linked to (its id, its downstream key, a side effect's).
    const byKey = await claimNew();
    const effectOp = await claimNew();
    const effectKey = (await putEffect(effectOp, "charge", "sent")).body.downstreamKey as string;
    const named = [await send("ticket.created", byKey.downstreamKey), await send("ticket.created", effectKey)];
    const stranger = await send("ticket.created", "cus_jane@example.com");
    const linkedByHand = await send("ticket.created", "ref-7731");
    const settled = await matchWebhookEvent({
      db: app.db,
      tenantId: acme.tenantId,
      eventId: linkedByHand.body.eventId,
      input: { operationId: (await claimNew()).operationId, outcome: "succeeded", reason: "r" },
      actor: "user:ops@example.com",
    });
    expect(settled.state).toBe("succeeded");
    const ids = [...named, stranger, linkedByHand].map((r) => r.body.eventId as string);
    await app.db.$executeRaw`UPDATE webhook_event SET received_at = now() - interval '31 days' WHERE id = ANY(${ids})`;
    expect(await pruneWebhookPayloads(app.db)).toBe(4);
    expect(await Promise.all(ids.map(async (id) => (await event(id)).correlationValue))).toEqual([byKey.downstreamKey, effectKey, null, null]);

    // Thirty days from now, the recent one goes too: through the CLI the operator runs.
    await app.db.$executeRaw`UPDATE webhook_event SET received_at = now() - interval '30 days 1 minute' WHERE id = ${recent.body.eventId}`;
    const cli = runCli(app.url, "prune");
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("Pruned 1 webhook payload(s)");
    expect((await event(recent.body.eventId)).payload).toBeNull();
  });
});
