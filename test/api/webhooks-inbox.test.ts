import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { countInbox, inboxFacets, listInbox } from "@/lib/console/webhook-inbox";
import { pruneWebhookPayloads } from "@/lib/webhooks/prune-webhook-payloads";
import { createConsoleUser } from "../support/browser";
import { anonymousConsole, signInConsole, type ConsoleClient } from "../support/console-session";
import { call, claim, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { createConnection, deliver, newStandardSecret, signStandard, ticketEvent } from "../support/webhooks";

// Issue 5, "Inbox": the console's match and ignore route handlers at the HTTP level, through
// next-auth's real session: role (operator), tenant (404), Origin (403), reason required for
// ignore, compare-and-set (an event is decided once), every change audited; and what the inbox
// query proposes and the trace shows.

type Role = "viewer" | "operator" | "approver" | "admin";
let app: TestApp;
let acme: TenantKeys;
let globex: TenantKeys;
const as = {} as Record<Role, ConsoleClient>;
const secret = newStandardSecret();
const globexSecret = newStandardSecret();
let connectionId: string;
let globexConnectionId: string;
const TOOL = "tickets.create";

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
  for (const keys of [acme, globex]) {
    const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${TOOL}`, { key: keys.admin, body: { policy: { leaseSeconds: 600 } } });
    expect(res.status, res.text).toBe(201);
  }
  ({ connectionId } = await createConnection(app.baseUrl, acme.admin, "tickets", { scheme: "standard-webhooks", secrets: [secret] }));
  ({ connectionId: globexConnectionId } = await createConnection(app.baseUrl, globex.admin, "tickets", { scheme: "standard-webhooks", secrets: [globexSecret] }));
  for (const role of ["viewer", "operator", "approver", "admin"] as const) {
    as[role] = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role, tenants: ["acme"] }));
  }
});
afterAll(async () => {
  await app?.stop();
});

type Op = { operationId: string; token: string; downstreamKey: string };

async function claimNew(keys: TenantKeys = acme): Promise<Op> {
  const res = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: TOOL, args: { title: "Printer on fire" } });
  expect(res.status, res.text).toBe(201);
  return { operationId: res.body.operationId, token: res.body.attempt.fencingToken, downstreamKey: res.body.downstreamKey };
}

async function unknownOp(resourceId?: string): Promise<Op> {
  const op = await claimNew();
  const res = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/complete`, {
    key: acme.agent,
    body: { fencingToken: op.token, outcome: "unknown", ...(resourceId ? { provider: { resourceId } } : {}), error: { code: "timeout", message: "provider timed out" } },
  });
  expect(res.status, res.text).toBe(200);
  return op;
}

async function inboxEvent(type: string, correlation: string | null, extra: Record<string, unknown> = {}, to = connectionId, key = secret): Promise<string> {
  const res = await deliver(app.baseUrl, to, signStandard(key, ticketEvent(type, correlation, extra)));
  expect(res.status, res.text).toBe(200);
  return res.body.eventId;
}

const matchPath = (id: string, tenant = "acme") => `/api/console/${tenant}/webhook-events/${encodeURIComponent(id)}/match`;
const ignorePath = (id: string, tenant = "acme") => `/api/console/${tenant}/webhook-events/${encodeURIComponent(id)}/ignore`;
const event = (id: string) => app.db.webhookEvent.findUniqueOrThrow({ where: { id } });
const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });
const eventAudit = (id: string) => app.db.auditEvent.findMany({ where: { targetType: "webhook_event", targetId: id }, orderBy: { id: "asc" } });

function expectProblem(res: Reply, status: number, code: string): void {
  expect([res.status, res.body?.code], res.text).toEqual([status, code]);
}

describe("matching from the inbox", () => {
  it("an operator matches an unmatched event to an unknown operation: settled via webhook by that person, audited twice", async () => {
    const op = await unknownOp();
    const eventId = await inboxEvent("ticket.created", "not-an-operation");

    const res = await as.operator.post(matchPath(eventId), { operationId: op.operationId, outcome: "succeeded", reason: "ticket id matches" });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ operationId: op.operationId, state: "succeeded", resolution: { via: "webhook", by: `user:${as.operator.email}`, reason: "ticket id matches" } });
    expect(await event(eventId)).toMatchObject({ status: "matched", operationId: op.operationId, outcome: "succeeded", decidedBy: `user:${as.operator.email}` });
    expect((await eventAudit(eventId)).map((a) => [a.action, a.actor])).toEqual([["webhook_event.matched", `user:${as.operator.email}`]]);
    const resolved = await app.db.auditEvent.findMany({ where: { targetId: op.operationId, action: "operation.resolved" } });
    expect(resolved).toHaveLength(1);
    expect(resolved[0]!.actor).toBe(`user:${as.operator.email}`);

    // Decided once: a second match or an ignore is refused and changes nothing.
    expectProblem(await as.operator.post(matchPath(eventId), { operationId: op.operationId, outcome: "failed" }), 409, "invalid-state");
    expectProblem(await as.operator.post(ignorePath(eventId), { reason: "late" }), 409, "invalid-state");
    expect((await operation(op.operationId)).state).toBe("succeeded");
  });

  // Review, 2026-12-01: an operation waiting to retry could not be settled from the inbox
  // (succeeded was refused, and failed was linked while the retry still ran the tool).
  it.each(["succeeded", "failed"] as const)("matching an operation waiting to retry as %s settles it: the retry does not run", async (outcome) => {
    const idem = `idem-${randomUUID()}`;
    const claimed = await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args: { title: "Printer on fire" } });
    expect(claimed.status, claimed.text).toBe(201);
    const operationId: string = claimed.body.operationId;
    const failed = await call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, {
      key: acme.agent,
      body: { fencingToken: claimed.body.attempt.fencingToken, outcome: "failed", retryable: true, error: { code: "timeout", message: "no answer" } },
    });
    expect([failed.status, failed.body.state], failed.text).toEqual([200, "pending"]);
    const eventId = await inboxEvent("ticket.created", "lost-correlation");

    const res = await as.operator.post(matchPath(eventId), { operationId, outcome, reason: "the provider's dashboard" });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: outcome, resolution: { via: "webhook", by: `user:${as.operator.email}` } });
    expect(await event(eventId)).toMatchObject({ status: "matched", operationId, outcome });
    const again = await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args: { title: "Printer on fire" } });
    expect([again.status, again.headers.get("idempotent-replayed")], again.text).toEqual([200, "true"]);
    expect(await app.db.attempt.count({ where: { operationId } })).toBe(1);
  });

  // Review, 2026-12-01: the inbox showed a candidate on attempt 1; someone allowed a retry and
  // attempt 2 ran; the match settled attempt 2 with the operator's reading of attempt 1.
  it("a match made on the attempt the inbox showed is refused once another attempt ran: 409, the event still waits", async () => {
    const idem = `idem-${randomUUID()}`;
    const args = { title: "Printer on fire" };
    const first = await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args });
    const operationId: string = first.body.operationId;
    expect((await call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, {
      key: acme.agent,
      body: { fencingToken: first.body.attempt.fencingToken, outcome: "unknown", error: { code: "timeout", message: "no answer" } },
    })).status).toBe(200);
    const eventId = await inboxEvent("ticket.created", "lost-correlation-stale");
    const shown = (await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200 })).events.find((e) => e.id === eventId)?.candidates.find((c) => c.id === operationId);
    expect(shown?.attempts).toBe(1);
    expect((await call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/resolve`, { key: acme.admin, body: { outcome: "retry", reason: "retry it" } })).status).toBe(200);
    expect((await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args })).status).toBe(201);

    const stale = await as.operator.post(matchPath(eventId), { operationId, outcome: "succeeded", seenAttempts: shown?.attempts });

    expectProblem(stale, 409, "invalid-state");
    expect(stale.body.detail).toContain("Attempt 2 of this operation ran since the inbox was read");
    expect(await event(eventId)).toMatchObject({ status: "unmatched" });
    expect((await operation(operationId)).state).toBe("processing");
    const current = await as.operator.post(matchPath(eventId), { operationId, outcome: "succeeded", seenAttempts: 2 });
    expect(current.status, current.text).toBe(200);
  });

  it("an operation awaiting approval cannot be matched (nothing of it has run): 409, the event still waits", async () => {
    const approved = "tickets.approved";
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${approved}`, { key: acme.admin, body: { policy: { approval: "required" } } })).status).toBe(201);
    const awaiting = await claim(app.baseUrl, acme.agent, `idem-${randomUUID()}`, { tool: approved, args: { title: "x" } });
    expect(awaiting.status, awaiting.text).toBe(202);
    const eventId = await inboxEvent("ticket.created", "lost-correlation");

    const res = await as.operator.post(matchPath(eventId), { operationId: awaiting.body.operationId, outcome: "failed", reason: "r" });

    expectProblem(res, 409, "invalid-state");
    expect(res.body.detail).toContain("awaiting approval");
    expect(await event(eventId)).toMatchObject({ status: "unmatched", operationId: null });
    expect((await operation(awaiting.body.operationId)).state).toBe("awaiting_approval");

    // Approved and not yet claimed, nothing has run either (webhook review, 2026-12-01: it was
    // settled as succeeded with no attempt, and the agent's claim replayed a success).
    const decided = await call(app.baseUrl, "POST", `/api/v1/approvals/${awaiting.body.approval.id}/decision`, { key: acme.approver, body: { decision: "approve" } });
    expect(decided.status, decided.text).toBe(200);
    for (const outcome of ["succeeded", "failed"]) {
      const approved = await as.operator.post(matchPath(eventId), { operationId: awaiting.body.operationId, outcome, reason: "r" });
      expectProblem(approved, 409, "invalid-state");
      expect(approved.body.detail).toContain("approved and not yet claimed: nothing of it has run yet");
    }
    expect(await event(eventId)).toMatchObject({ status: "unmatched", operationId: null });
    expect(await operation(awaiting.body.operationId)).toMatchObject({ state: "pending", attemptCount: 0, resolution: null });
  });

  // Review, 2026-12-01: a provider's "succeeded" about an operation awaiting approval flags it, and
  // the approver must see that before approving (the approval page never showed flags).
  it("a provider event about an operation awaiting approval is on its approval page, as an alert while it can be approved", async () => {
    const approved = "tickets.approved-flag";
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${approved}`, { key: acme.admin, body: { policy: { approval: "required" } } })).status).toBe(201);
    const awaiting = await claim(app.baseUrl, acme.agent, `idem-${randomUUID()}`, { tool: approved, args: { title: "x" } });
    expect(awaiting.status, awaiting.text).toBe(202);
    const page = () => as.approver.request("GET", `/t/acme/approvals/${awaiting.body.approval.id}`);
    expect((await page()).text).not.toContain("Flagged:");

    const eventId = await inboxEvent("ticket.created", awaiting.body.operationId);

    expect((await event(eventId)).status).toBe("contradicting");
    const html = (await page()).text;
    expect(html).toMatch(/<div class="notice warn-notice operation-flag" role="alert"><strong>Flagged:<\/strong> (<!-- -->)?webhook /);
    expect(html).toContain(`webhook ${eventId} (ticket.created) says succeeded, but the operation has not run yet (awaiting approval)`);
    expect(html).toContain("Approving lets the agent&#x27;s next claim run the tool: check with the provider first.");
    // In the inbox the operation it names is shown, without a Match button the server would
    // refuse every time (console review, 2026-12-01 night).
    const inbox = (await as.operator.request("GET", `/t/acme/inbox?q=${encodeURIComponent(eventId)}`)).text;
    expect(inbox).toContain(awaiting.body.operationId);
    expect(inbox).toContain("has not run");
    expect(inbox).not.toContain(`Match ${eventId} to ${awaiting.body.operationId}`);
  });

  it("after its payload is pruned, an event's correlation value is said to be pruned with it, not missing", async () => {
    const eventId = await inboxEvent("ticket.created", "cus_42_jane@example.com");
    const card = async () => (await as.operator.request("GET", `/t/acme/inbox?q=${encodeURIComponent(eventId)}`)).text;
    expect(await card()).toContain("cus_42_jane@example.com");
    await app.db.$executeRaw`UPDATE webhook_event SET received_at = now() - interval '31 days' WHERE id = ${eventId}`;
    expect(await pruneWebhookPayloads(app.db)).toBeGreaterThanOrEqual(1);

    const html = await card();
    expect(html).not.toContain("cus_42_jane@example.com");
    expect(html).toContain("pruned with the payload");
  });

  it("confirms an unmapped event's operation with an outcome the operator chooses; the trace shows the event and its payload", async () => {
    const op = await claimNew();
    const eventId = await inboxEvent("ticket.escalated", op.operationId);
    expect((await event(eventId)).status).toBe("unmapped");

    const res = await as.admin.post(matchPath(eventId), { operationId: op.operationId, outcome: "failed" });

    expect(res.status, res.text).toBe(200);
    expect((await operation(op.operationId)).state).toBe("failed");
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    const entry = trace!.timeline.find((e) => e.kind === "webhook");
    expect(entry?.title).toContain(`Webhook ticket.escalated from tickets · matched by ${as.admin.email} as failed`);
    expect(entry?.json.map((j) => j.label)).toEqual(["Webhook payload"]);
    // The provider said nothing about the outcome; the operator chose it. The trace keeps the two apart.
    expect(entry?.fields.filter((f) => f.label.startsWith("Outcome"))).toEqual([
      { label: "Outcome its type maps to", value: "none (its type maps to no outcome)", format: undefined },
      { label: "Outcome chosen by the operator", value: "failed", format: undefined },
    ]);
    expect(entry?.audit.map((a) => a.action)).toContain("webhook_event.matched");
    // The entry stands at the event's arrival; when the operator matched it is a field of its own.
    const decided = (await event(eventId)).decidedAt!;
    expect(entry?.fields).toContainEqual({ label: "Matched at", value: decided.toISOString(), format: "clock" });
    expect(trace!.timeline.find((e) => e.kind === "resolution")?.fields).toContainEqual({ label: "Via", value: "webhook", format: undefined });
  });

  it("refuses a match that contradicts a settled operation (409) and one to an operation of another tenant (404)", async () => {
    const settled = await claimNew();
    await call(app.baseUrl, "POST", `/api/v1/operations/${settled.operationId}/complete`, { key: acme.agent, body: { fencingToken: settled.token, outcome: "succeeded" } });
    const foreign = await claimNew(globex);
    const eventId = await inboxEvent("ticket.rejected", "nothing");
    const before = await event(eventId);

    expectProblem(await as.operator.post(matchPath(eventId), { operationId: settled.operationId, outcome: "failed" }), 409, "invalid-state");
    expectProblem(await as.operator.post(matchPath(eventId), { operationId: foreign.operationId, outcome: "failed" }), 404, "operation-not-found");
    expect(await event(eventId)).toEqual(before);
    expect((await operation(foreign.operationId)).state).toBe("processing");
    // Agreeing with the settled outcome links it without changing it.
    const link = await as.operator.post(matchPath(eventId), { operationId: settled.operationId, outcome: "succeeded" });
    expect(link.status, link.text).toBe(200);
    expect((await operation(settled.operationId)).resolution).toBeNull();
    expect(await app.db.auditEvent.count({ where: { targetId: settled.operationId, action: "operation.webhook_matched" } })).toBe(1);
  });

  // API review: once an ignored event could be matched, a match racing an ignore won after it
  // (both 200, the ignorer told "ignored" of an event then matched): the match says the status
  // it saw, and one that saw none never matches an ignored event.
  it.each([{ seen: "unmatched" }, { seen: undefined }])("a concurrent match (status seen: $seen) and ignore of one event: exactly one wins, every time", async ({ seen }) => {
    for (let round = 0; round < 8; round++) {
      const op = await unknownOp();
      const eventId = await inboxEvent("ticket.created", `race-${round}`);

      const [m, i] = await Promise.all([
        as.operator.post(matchPath(eventId), { operationId: op.operationId, outcome: "succeeded", ...(seen ? { eventStatus: seen } : {}) }),
        as.admin.post(ignorePath(eventId), { reason: "duplicate of another ticket" }),
      ]);

      expect([m.status, i.status].sort(), `round ${round}: ${m.text} ${i.text}`).toEqual([200, 409]);
      expect(await eventAudit(eventId)).toHaveLength(1);
      expect((await operation(op.operationId)).state).toBe(m.status === 200 ? "succeeded" : "unknown");
      const lost = m.status === 409 ? m : i;
      // The loser hears what the event is now, who decided it and why; `status` stays the HTTP status.
      expect(lost.body).toMatchObject({ status: 409, code: "invalid-state", eventStatus: m.status === 409 ? "ignored" : "matched" });
      if (m.status === 409) expect(lost.body.detail).toContain(`ignored by ${as.admin.email} ("duplicate of another ticket")`);
    }
  });
});

describe("ignoring from the inbox", () => {
  it.each([{ body: {} }, { body: { reason: "  " } }])("needs a reason ($body): 400, nothing changes", async ({ body }) => {
    const eventId = await inboxEvent("ticket.created", "x");
    expectProblem(await as.operator.post(ignorePath(eventId), body), 400, "invalid-request");
    expect((await event(eventId)).status).toBe("unmatched");
    expect(await eventAudit(eventId)).toEqual([]);
  });

  it("with a reason: ignored, out of the inbox, audited with the reason", async () => {
    const eventId = await inboxEvent("ticket.created", "x");
    const res = await as.operator.post(ignorePath(eventId), { reason: "a test event from the provider's dashboard" });
    expect(res.status, res.text).toBe(200);
    expect(await event(eventId)).toMatchObject({ status: "ignored", reason: "a test event from the provider's dashboard" });
    expect((await eventAudit(eventId))[0]).toMatchObject({ action: "webhook_event.ignored", reason: "a test event from the provider's dashboard" });
    const inbox = await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200 });
    expect(inbox.events.map((e) => e.id)).not.toContain(eventId);
  });
});

describe("the handled view", () => {
  it("lists what a person decided, latest decision first, with who and why; an ignored event can still be matched, an automatic match is never listed", async () => {
    const op = await unknownOp();
    const ignored = await inboxEvent("ticket.created", "handled-view-1");
    const auto = await claimNew();
    const automatic = await inboxEvent("ticket.created", auto.operationId);
    expect((await event(automatic)).status).toBe("matched");
    const before = await inboxFacets({ db: app.db, tenantId: acme.tenantId });

    const ignoredRes = await as.operator.post(ignorePath(ignored), { reason: "looked like a staging event" });
    expect(ignoredRes.status, ignoredRes.text).toBe(200);
    const handledIds = async () => (await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200, filter: { status: "handled" } })).events;
    let handled = await handledIds();
    expect(handled[0]).toMatchObject({ id: ignored, status: "ignored", decision: { by: `user:${as.operator.email}`, reason: "looked like a staging event" } });
    // Still a candidate list: the operator may match it after all.
    expect(handled[0]?.candidates.map((c) => c.id)).toContain(op.operationId);
    expect(handled.map((e) => e.id)).not.toContain(automatic);
    expect((await inboxFacets({ db: app.db, tenantId: acme.tenantId })).handled).toBe(before.handled + 1);
    expect(await countInbox({ db: app.db, tenantId: acme.tenantId, filter: { status: "handled" } })).toBe(before.handled + 1);

    // A match that did not see the ignore (a stale inbox tab) is refused, and says who ignored it and why.
    const stale = await as.admin.post(matchPath(ignored), { operationId: op.operationId, outcome: "succeeded", eventStatus: "unmatched" });
    expectProblem(stale, 409, "invalid-state");
    expect(stale.body).toMatchObject({ eventStatus: "ignored", decidedBy: `user:${as.operator.email}` });
    expect(stale.body.detail).toContain(`ignored by ${as.operator.email} ("looked like a staging event")`);
    expectProblem(await as.admin.post(matchPath(ignored), { operationId: op.operationId, outcome: "succeeded" }), 409, "invalid-state");
    expect((await operation(op.operationId)).state).toBe("unknown");

    // The ignore was a mistake: the event is the evidence for the unknown operation.
    const res = await as.admin.post(matchPath(ignored), { operationId: op.operationId, outcome: "succeeded", reason: "the ticket exists after all", eventStatus: "ignored" });
    expect(res.status, res.text).toBe(200);
    expect((await operation(op.operationId)).state).toBe("succeeded");
    expect(await event(ignored)).toMatchObject({ status: "matched", operationId: op.operationId, decidedBy: `user:${as.admin.email}` });
    const audit = await eventAudit(ignored);
    expect(audit.map((a) => a.action)).toEqual(["webhook_event.ignored", "webhook_event.matched"]);
    expect(audit[1]?.before).toMatchObject({ status: "ignored" });
    handled = await handledIds();
    expect(handled[0]).toMatchObject({ id: ignored, status: "matched", operationId: op.operationId, decision: { by: `user:${as.admin.email}` }, candidates: [] });
    expect(handled.filter((e) => e.id === ignored)).toHaveLength(1);
    // Decided once more is refused: a matched event stays matched.
    expectProblem(await as.admin.post(ignorePath(ignored), { reason: "again" }), 409, "invalid-state");
    expectProblem(await as.admin.post(matchPath(ignored), { operationId: op.operationId, outcome: "succeeded", eventStatus: "ignored" }), 409, "invalid-state");
  });

  it("matching a contradicting event, ignored first, with the outcome already recorded answers the operation's flag", async () => {
    const settled = await claimNew();
    const done = await call(app.baseUrl, "POST", `/api/v1/operations/${settled.operationId}/complete`, { key: acme.agent, body: { fencingToken: settled.token, outcome: "succeeded" } });
    expect(done.status, done.text).toBe(200);
    const eventId = await inboxEvent("ticket.rejected", settled.operationId);
    expect((await event(eventId)).status).toBe("contradicting");
    const flag = (await operation(settled.operationId)).flagReason;
    expect(flag).toBeTruthy();
    expect((await as.operator.post(ignorePath(eventId), { reason: "checking with the provider" })).status).toBe(200);

    const res = await as.operator.post(matchPath(eventId), { operationId: settled.operationId, outcome: "succeeded", eventStatus: "ignored", reason: "the provider confirms the ticket" });
    expect(res.status, res.text).toBe(200);
    expect(await operation(settled.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null, flagReason: null });
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: settled.operationId, action: "operation.webhook_matched" } });
    expect(audit.after).toMatchObject({ clearedFlag: flag, eventId });
  });

  // Re-review: a flag is answered by its own event's match, not by linking some other event.
  it("linking another event with the recorded outcome leaves a flag other evidence raised", async () => {
    const settled = await claimNew();
    await call(app.baseUrl, "POST", `/api/v1/operations/${settled.operationId}/complete`, { key: acme.agent, body: { fencingToken: settled.token, outcome: "succeeded" } });
    const contradicting = await inboxEvent("ticket.rejected", settled.operationId);
    expect((await event(contradicting)).status).toBe("contradicting");
    const other = await inboxEvent("ticket.created", "unrelated-correlation");
    const res = await as.operator.post(matchPath(other), { operationId: settled.operationId, outcome: "succeeded", eventStatus: "unmatched" });
    expect(res.status, res.text).toBe(200);
    expect((await operation(settled.operationId)).flaggedAt).not.toBeNull();
    expect((await event(contradicting)).status).toBe("contradicting");
  });

  // Review, 2026-12-02: the confirm took down whatever flag stood once the event was linked there,
  // including one raised after the inbox was read; the operation left the flagged list unseen.
  it("confirming a contradicting event's operation leaves a flag raised after the event; a match that saw the older flag is a 409", async () => {
    const settled = await claimNew();
    await call(app.baseUrl, "POST", `/api/v1/operations/${settled.operationId}/complete`, { key: acme.agent, body: { fencingToken: settled.token, outcome: "succeeded" } });
    const first = await inboxEvent("ticket.rejected", settled.operationId);
    const shown = (await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200 })).events.find((e) => e.id === first)?.candidates.find((c) => c.id === settled.operationId);
    const firstFlag = await operation(settled.operationId);
    expect(shown?.flag).toEqual({ at: firstFlag.flaggedAt?.toISOString(), reason: firstFlag.flagReason });
    await new Promise((r) => setTimeout(r, 5));
    const second = await inboxEvent("ticket.rejected", settled.operationId, { note: "a second delivery of another rejection" });
    const standing = await operation(settled.operationId);
    expect(standing.flaggedAt?.getTime()).toBeGreaterThan(firstFlag.flaggedAt!.getTime());

    const stale = await as.operator.post(matchPath(first), { operationId: settled.operationId, outcome: "succeeded", eventStatus: "contradicting", seenAttempts: 1, seenFlaggedAt: shown?.flag?.at });
    expectProblem(stale, 409, "invalid-state");
    expect(stale.body.detail).toContain("flagged since the inbox was read");
    expect(await event(first)).toMatchObject({ status: "contradicting" });
    // Two deliveries back to back can flag in one millisecond: the second flag then carries the
    // first event's time, and only its words tell it is not that event's own.
    await app.db.$executeRaw`UPDATE operation SET flagged_at = (SELECT received_at FROM webhook_event WHERE id = ${first}) WHERE id = ${settled.operationId}`;
    const sameMillisecond = await operation(settled.operationId);

    // Without saying which flag it saw (an id typed by hand): linked, and the newer flag stays.
    const res = await as.operator.post(matchPath(first), { operationId: settled.operationId, outcome: "succeeded", eventStatus: "contradicting" });
    expect(res.status, res.text).toBe(200);
    expect(await operation(settled.operationId)).toMatchObject({ state: "succeeded", flaggedAt: sameMillisecond.flaggedAt, flagReason: standing.flagReason });
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: settled.operationId, action: "operation.webhook_matched" } });
    expect(audit.after).toMatchObject({ eventId: first, clearedFlag: null });
    expect((await event(second)).status).toBe("contradicting");
  });

  // The same review: settling an operation from the inbox took down any flag, seen or not.
  it("settling a flagged operation from the inbox takes its flag down only if the operator saw it: a flag raised since is a 409", async () => {
    // Attempt 1's outcome unknown, a retry allowed, attempt 2 running; then attempt 1 says it
    // succeeded after all: "the tool may have acted twice" flags the running operation.
    const flaggedRetry = async () => {
      const idem = `idem-${randomUUID()}`;
      const args = { title: "Printer on fire" };
      const first = await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args });
      const operationId: string = first.body.operationId;
      const token = first.body.attempt.fencingToken;
      expect((await call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, {
        key: acme.agent, body: { fencingToken: token, outcome: "unknown", error: { code: "timeout", message: "no answer" } },
      })).status).toBe(200);
      expect((await call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/resolve`, { key: acme.admin, body: { outcome: "retry", reason: "retry it" } })).status).toBe(200);
      expect((await claim(app.baseUrl, acme.agent, idem, { tool: TOOL, args })).status).toBe(201);
      return { operationId, late: () => call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, { key: acme.agent, body: { fencingToken: token, outcome: "succeeded" } }) };
    };

    const seen = await flaggedRetry();
    const eventId = await inboxEvent("ticket.created", "lost-correlation-flag-seen");
    const candidate = () => listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200 }).then((l) => l.events.find((e) => e.id === eventId)?.candidates.find((c) => c.id === seen.operationId));
    expect((await candidate())?.flag).toBeNull();
    await seen.late();
    const flagged = await operation(seen.operationId);
    expect(flagged).toMatchObject({ state: "processing", flagReason: expect.stringContaining("may have acted twice") });

    const stale = await as.operator.post(matchPath(eventId), { operationId: seen.operationId, outcome: "succeeded", seenAttempts: 2, seenFlaggedAt: null });
    expectProblem(stale, 409, "invalid-state");
    expect(stale.body).toMatchObject({ flagged: true });
    expect(await operation(seen.operationId)).toMatchObject({ state: "processing", flaggedAt: flagged.flaggedAt });
    expect(await event(eventId)).toMatchObject({ status: "unmatched" });

    const read = await candidate();
    expect(read?.flag).toEqual({ at: flagged.flaggedAt?.toISOString(), reason: flagged.flagReason });
    const res = await as.operator.post(matchPath(eventId), { operationId: seen.operationId, outcome: "succeeded", seenAttempts: 2, seenFlaggedAt: read?.flag?.at });
    expect(res.status, res.text).toBe(200);
    expect(await operation(seen.operationId)).toMatchObject({ state: "succeeded", flaggedAt: null });
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: eventId, action: "webhook_event.matched" } });
    expect(audit.after).toMatchObject({ clearedFlag: flagged.flagReason });

    // An id typed by hand says no flag: settled, and the flag nobody read stays.
    const unseen = await flaggedRetry();
    await unseen.late();
    const unseenFlag = await operation(unseen.operationId);
    expect(unseenFlag.flaggedAt).not.toBeNull();
    const typed = await inboxEvent("ticket.created", "lost-correlation-flag-unseen");
    const byHand = await as.operator.post(matchPath(typed), { operationId: unseen.operationId, outcome: "succeeded" });
    expect(byHand.status, byHand.text).toBe(200);
    expect(await operation(unseen.operationId)).toMatchObject({ state: "succeeded", flaggedAt: unseenFlag.flaggedAt, flagReason: unseenFlag.flagReason });
  });

  it("a match whose page showed another waiting reason hears what the event is now; a default note is never quoted as someone's reason", async () => {
    const op = await unknownOp();
    const eventId = await inboxEvent("ticket.created", "seen-status");
    const stale = await as.operator.post(matchPath(eventId), { operationId: op.operationId, outcome: "succeeded", eventStatus: "contradicting" });
    expectProblem(stale, 409, "invalid-state");
    expect(stale.body.detail).toMatch(/^This event is unmatched now, not contradicting as your page showed/);
    expect((await as.operator.post(matchPath(eventId), { operationId: op.operationId, outcome: "succeeded", eventStatus: "unmatched" })).status).toBe(200);
    const late = await as.admin.post(ignorePath(eventId), { reason: "late" });
    expectProblem(late, 409, "invalid-state");
    expect(late.body.detail).toBe(`This event was already matched by ${as.operator.email}; the inbox now shows it as it stands.`);
  });

  it("pages by decision time, and the page reads it from the URL", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await inboxEvent("ticket.created", `handled-page-${i}`);
      expect((await as.operator.post(ignorePath(id), { reason: `stray ${i}` })).status).toBe(200);
      ids.push(id);
    }
    const first = await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 2, filter: { status: "handled" } });
    expect(first.events.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect(first.next).toMatchObject({ id: ids[1] });
    const second = await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 2, before: first.next, filter: { status: "handled" } });
    expect(second.events[0]?.id).toBe(ids[0]);

    const page = await as.operator.request("GET", `/t/acme/inbox?status=handled&q=${encodeURIComponent(ids[1]!)}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`Webhook event ${ids[1]}`);
    expect(page.text).toContain("stray 1");
    expect(page.text).not.toContain(`Webhook event ${ids[0]}`);
    const none = await as.operator.request("GET", `/t/acme/inbox?status=handled&q=no-such-event`);
    expect(none.text).toContain("No handled event matches these filters");
  });

  // Console review: the handled view offered the waiting counts per connection (and no
  // connection whose events were all decided), said "Outcome it says" of the operator's choice,
  // and linked an operation pruned since to a 404.
  it("counts its own events per connection, says what the event was matched as, and names a pruned operation without a link", async () => {
    const auditSecret = newStandardSecret();
    const { connectionId: audits } = await createConnection(app.baseUrl, acme.admin, "audits", { scheme: "standard-webhooks", secrets: [auditSecret] });
    const op = await claimNew();
    // An unmapped type naming the operation: the operator chooses the outcome.
    const eventId = await inboxEvent("ticket.escalated", op.operationId, {}, audits, auditSecret);
    expect((await event(eventId)).status).toBe("unmapped");
    expect((await as.operator.post(matchPath(eventId), { operationId: op.operationId, outcome: "failed", eventStatus: "unmapped" })).status).toBe(200);

    const waiting = await inboxFacets({ db: app.db, tenantId: acme.tenantId });
    expect(waiting.connections.find((c) => c.name === "audits")).toBeUndefined();
    const decided = await inboxFacets({ db: app.db, tenantId: acme.tenantId, handled: true });
    expect(decided.connections.find((c) => c.name === "audits")).toEqual({ name: "audits", count: 1 });
    expect(decided.connections.reduce((n, c) => n + c.count, 0)).toBe(decided.handled);

    const shown = async () => (await as.operator.request("GET", `/t/acme/inbox?status=handled&connection=audits`)).text;
    let html = await shown();
    expect(html).toContain("Matched as");
    // The link carries where it was opened from, for the trace's breadcrumb.
    expect(html).toContain(`href="/t/acme/operations/${op.operationId}?from=inbox"`);
    // No note was written: the stored default is not quoted as if someone had.
    const decisionLine = html.match(/<p class="small decision">.*?<\/p>/)?.[0];
    expect(decisionLine).toContain("Matched");
    expect(decisionLine).not.toContain("matched webhook event");

    await app.db.$executeRaw`DELETE FROM operation WHERE id = ${op.operationId}`;
    html = await shown();
    expect(html).not.toContain(`href="/t/acme/operations/${op.operationId}`);
    expect(html).toContain("no longer stored: pruned after its retention");
  });
});

describe("who may", () => {
  it.each(["viewer", "approver"] as const)("the %s role is refused (403) on match and ignore, and nothing changes", async (role) => {
    const op = await unknownOp();
    const eventId = await inboxEvent("ticket.created", "x");
    expectProblem(await as[role].post(matchPath(eventId), { operationId: op.operationId, outcome: "succeeded" }), 403, "forbidden");
    expectProblem(await as[role].post(ignorePath(eventId), { reason: "r" }), 403, "forbidden");
    expect((await event(eventId)).status).toBe("unmatched");
    expect((await operation(op.operationId)).state).toBe("unknown");
  });

  it("signed out is 401, a foreign Origin is 403, another tenant's event is 404", async () => {
    const eventId = await inboxEvent("ticket.created", "x");
    expectProblem(await anonymousConsole(app.baseUrl).post(ignorePath(eventId), { reason: "r" }), 401, "unauthorized");
    expectProblem(await as.operator.post(ignorePath(eventId), { reason: "r" }, { origin: "https://evil.example" }), 403, "forbidden");
    const foreignEvent = await inboxEvent("ticket.created", "x", {}, globexConnectionId, globexSecret);
    expectProblem(await as.operator.post(ignorePath(foreignEvent), { reason: "r" }), 404, "webhook-event-not-found");
    expectProblem(await as.operator.post(ignorePath(foreignEvent, "globex"), { reason: "r" }), 404, "not-found");
    expect((await event(foreignEvent)).status).toBe("unmatched");
  });
});

describe("candidates the inbox proposes", () => {
  it("ranks an unknown operation whose provider resource id is in the payload first, and never another tenant's", async () => {
    const target = await unknownOp("T-4242");
    const other = await unknownOp();
    const foreign = await claimNew(globex);
    const eventId = await inboxEvent("ticket.created", "lost-correlation", { ticket: { id: "T-4242" } });

    const inbox = await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200 });
    const listed = inbox.events.find((e) => e.id === eventId);

    expect(listed?.candidates[0]).toMatchObject({ id: target.operationId, resourceId: "T-4242" });
    expect(listed?.candidates[0]?.reasons).toContain("resource id T-4242 appears in the payload");
    // What tells candidates of one tool apart: the start of their arguments (console review).
    expect(listed?.candidates[0]?.argsPreview).toBe('{"title": "Printer on fire"}');
    expect(listed?.candidates.map((c) => c.id)).toContain(other.operationId);
    expect(listed?.candidates.map((c) => c.id)).not.toContain(foreign.operationId);
    expect(listed?.candidates.every((c) => ["unknown", "processing"].includes(c.state))).toBe(true);
  });
});

describe("what a connection is about", () => {
  it("the tool families its latest matched events settled make an operation of that family a candidate", async () => {
    // A connection whose name and event types say nothing of tickets: only what it matched does.
    const relaySecret = newStandardSecret();
    const { connectionId: relay } = await createConnection(app.baseUrl, acme.admin, "relay", {
      scheme: "standard-webhooks",
      secrets: [relaySecret],
      outcomes: { "job.done": "succeeded" },
    });
    const learned = await unknownOp();
    expect((await event(await inboxEvent("job.done", learned.operationId, {}, relay, relaySecret))).status).toBe("matched");
    const waiting = await unknownOp();
    const eventId = await inboxEvent("job.done", "nothing-it-names", {}, relay, relaySecret);

    const inbox = await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200 });
    const candidate = inbox.events.find((e) => e.id === eventId)?.candidates.find((c) => c.id === waiting.operationId);

    expect(candidate?.reasons).toContain("same tool family (tickets.*)");
  });
});

describe("filtering the inbox", () => {
  it("narrows by reason, connection and an exact value, counts each choice over the whole inbox, and keeps other tenants out", async () => {
    const billingSecret = newStandardSecret();
    const { connectionId: billing } = await createConnection(app.baseUrl, acme.admin, "billing", { scheme: "standard-webhooks", secrets: [billingSecret] });
    // Names a real operation with a type the connection does not map: unmapped.
    const unmapped = await inboxEvent("invoice.voided", (await claimNew()).operationId, {}, billing, billingSecret);
    const signed = signStandard(secret, ticketEvent("ticket.created", "corr-filter-7"));
    const delivered = await deliver(app.baseUrl, connectionId, signed);
    expect(delivered.body?.status, delivered.text).toBe("unmatched");
    const unmatched = delivered.body.eventId as string;
    // globex has a connection named "tickets" too, with an event carrying the same correlation value.
    await inboxEvent("ticket.created", "corr-filter-7", {}, globexConnectionId, globexSecret);

    const ids = async (filter: Parameters<typeof listInbox>[0]["filter"]) => (await listInbox({ db: app.db, tenantId: acme.tenantId, limit: 200, filter })).events.map((e) => e.id);
    const everything = await ids(undefined);
    expect(everything).toEqual(expect.arrayContaining([unmapped, unmatched]));

    const onlyUnmapped = await ids({ status: "unmapped" });
    expect(onlyUnmapped).toContain(unmapped);
    expect(onlyUnmapped).not.toContain(unmatched);
    expect(await ids({ connection: "billing" })).toEqual([unmapped]);
    expect(await ids({ connection: "billing", status: "unmatched" })).toEqual([]);
    // One exact value: the provider's event id, the correlation value, the event type, or Tollgate's event id.
    expect(await ids({ q: signed.id })).toEqual([unmatched]);
    expect(await ids({ q: "corr-filter-7" })).toEqual([unmatched]);
    expect(await ids({ q: "invoice.voided" })).toEqual([unmapped]);
    expect(await ids({ q: unmatched })).toEqual([unmatched]);
    expect(await ids({ q: "corr-filter" })).toEqual([]);
    // Text PostgreSQL cannot hold names nothing: no rows, no error.
    expect(await ids({ q: "evt\u0000" })).toEqual([]);
    expect(await ids({ connection: "bill\ud800" })).toEqual([]);
    expect(await countInbox({ db: app.db, tenantId: acme.tenantId, filter: { q: "evt\u0000" } })).toBe(0);

    expect(await countInbox({ db: app.db, tenantId: acme.tenantId, filter: { connection: "tickets", q: "corr-filter-7" } })).toBe(1);
    const facets = await inboxFacets({ db: app.db, tenantId: acme.tenantId });
    const all = await countInbox({ db: app.db, tenantId: acme.tenantId });
    expect(facets.byStatus.unmatched + facets.byStatus.unmapped + facets.byStatus.contradicting).toBe(all);
    expect(facets.byStatus.unmapped).toBe(await countInbox({ db: app.db, tenantId: acme.tenantId, filter: { status: "unmapped" } }));
    expect(facets.connections.find((c) => c.name === "billing")).toEqual({ name: "billing", count: 1 });
    expect(facets.connections.reduce((n, c) => n + c.count, 0)).toBe(all);
  });

  it("the page reads its filters from the URL: a narrowed inbox, a search that finds nothing, and text PostgreSQL refuses, never a 500", async () => {
    const delivered = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.reopened", "corr-page-3")));
    const id = delivered.body.eventId as string;
    const page = (query: string) => as.operator.request("GET", `/t/acme/inbox${query}`);
    const narrowed = await page(`?status=${delivered.body.status}&q=${encodeURIComponent(id)}`);
    expect(narrowed.status).toBe(200);
    expect(narrowed.text).toContain(`Webhook event ${id}`);
    expect(narrowed.text).toContain("The newest 1 of 1 matching");
    const nothing = await page("?q=no-such-event");
    expect(nothing.status).toBe(200);
    expect(nothing.text).toContain("No event in the inbox matches these filters");
    for (const odd of ["?q=%00", "?connection=%ED%A0%80", "?status=everything", "?status=unmapped&status=unmatched", `?before=${"x".repeat(500)}`]) {
      const res = await page(odd);
      expect(res.status, odd).toBe(200);
    }
  });
});
