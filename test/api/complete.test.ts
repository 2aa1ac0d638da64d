import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { sha256Hex } from "@/lib/crypto/digest";
import { call, claim, type Reply } from "../support/http";
import { createTool as createToolIn, expectProblem, type Policy } from "../support/protocol";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// Complete, heartbeat and read (AGENT-API.md "Heartbeat", "Complete", "Read"): what the lease
// holder's report does to the stored operation, its attempt and the audit log, and what
// every other report (repeated, contradicting, stale) is refused with.

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

const STATUS_VIEW_FIELDS = [
  "attempts",
  "createdAt",
  "downstreamKey",
  "error",
  "leaseExpiresAt",
  "notBefore",
  "operationId",
  "resolution",
  "result",
  "resultExpiresAt",
  "state",
  "tool",
  "updatedAt",
];

const createTool = (policy: Policy = {}) => createToolIn(app.baseUrl, [acme], { policy });

const newKey = () => `idem-${randomUUID()}`;

type Claimed = { operationId: string; token: string; downstreamKey: string; idem: string; tool: string; args: Record<string, unknown> };

async function claimNew(tool: string, args: Record<string, unknown> = { title: "Printer on fire" }): Promise<Claimed> {
  const idem = newKey();
  const res = await claim(app.baseUrl, acme.agent, idem, { tool, args });
  expect(res.status, res.text).toBe(201);
  return { operationId: res.body.operationId, token: res.body.attempt.fencingToken, downstreamKey: res.body.downstreamKey, idem, tool, args };
}

function complete(operationId: string, body: Record<string, unknown>, key = acme.agent): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, { key, body });
}

function heartbeat(operationId: string, fencingToken: string, key = acme.agent): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/heartbeat`, { key, body: { fencingToken } });
}

const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });
const attemptsOf = (operationId: string) => app.db.attempt.findMany({ where: { operationId }, orderBy: { number: "asc" } });
const auditOf = (operationId: string) =>
  app.db.auditEvent.findMany({ where: { targetType: "operation", targetId: operationId }, orderBy: { id: "asc" } });

// Everything stored about one operation, to prove a refused request changed none of it.
// An operation that was running when migration 20261201190000 deployed still holds the retry
// resolution its attempt ran under (since then a new attempt clears it): put one back, dated
// before the attempt started, to keep the guards for such rows tested.
async function restoreRetryResolution(operationId: string): Promise<void> {
  expect((await operation(operationId)).resolution).toBeNull();
  await app.db.$executeRaw`UPDATE operation SET resolution = jsonb_build_object('outcome', 'retry', 'by', 'api-key:legacy', 'via', 'operator',
    'reason', 'retry it', 'at', (SELECT started_at - interval '1 second' FROM attempt WHERE operation_id = ${operationId} ORDER BY number DESC LIMIT 1))
    WHERE id = ${operationId}`;
}

async function snapshot(operationId: string) {
  return { operation: await operation(operationId), attempts: await attemptsOf(operationId), audit: await auditOf(operationId) };
}

async function waitUntil(operationId: string, what: "lease expired" | "backoff over"): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    // The database clock is the one the server decides with.
    const rows = await app.db.$queryRaw<{ ok: boolean }[]>`
      SELECT CASE WHEN ${what} = 'lease expired' THEN now() > lease_expires_at + interval '200 milliseconds'
                  ELSE not_before IS NULL OR now() > not_before END AS ok
      FROM operation WHERE id = ${operationId}`;
    if (rows[0]?.ok) return;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in time for ${operationId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function expectStatusView(body: Record<string, unknown>): void {
  expect(Object.keys(body).sort()).toEqual(STATUS_VIEW_FIELDS);
}

const HOUR_MS = 3_600_000;

describe("complete: the lease holder reports the outcome", () => {
  it("succeeded stores the result, keeps it for the tool's retention, ends the attempt and is audited; the answer is the status view", async () => {
    const tool = await createTool({ resultRetentionHours: 5 });
    const op = await claimNew(tool);

    const res = await complete(op.operationId, {
      fencingToken: op.token,
      outcome: "succeeded",
      result: { statusCode: 201, body: { ticket: "T-9" }, resourceId: "T-9" },
      provider: { requestId: "req_1", resourceId: "T-9" },
    });

    expect(res.status, res.text).toBe(200);
    expectStatusView(res.body);
    expect(res.body).toMatchObject({
      operationId: op.operationId,
      tool,
      state: "succeeded",
      attempts: 1,
      leaseExpiresAt: null,
      notBefore: null,
      downstreamKey: op.downstreamKey,
      result: { statusCode: 201, body: { ticket: "T-9" }, resourceId: "T-9" },
      error: null,
      resolution: null,
    });
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({ state: "succeeded", result: { statusCode: 201, body: { ticket: "T-9" }, resourceId: "T-9" }, leaseExpiresAt: null });
    expect(stored.completedAt).not.toBeNull();
    // Retention runs from the completion (both stamped by the same transaction).
    expect(stored.resultExpiresAt!.getTime() - stored.completedAt!.getTime()).toBe(5 * HOUR_MS);
    expect(res.body.resultExpiresAt).toBe(stored.resultExpiresAt!.toISOString());
    const attempts = await attemptsOf(op.operationId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ number: 1, outcome: "succeeded", provider: { requestId: "req_1", resourceId: "T-9" } });
    expect(attempts[0]!.endedAt).not.toBeNull();
    const audit = await auditOf(op.operationId);
    expect(audit.map((e) => e.action)).toEqual(["operation.claimed", "operation.completed"]);
    const keyId = (await app.db.apiKey.findFirstOrThrow({ where: { tenantId: acme.tenantId, principal: "acme-agent" } })).id;
    expect(audit[1]).toMatchObject({
      actor: `api-key:${keyId}`,
      before: { state: "processing", attempt: 1 },
      after: { state: "succeeded", attempt: 1, outcome: "succeeded" },
    });
    // The answer is exactly what a read shows afterwards.
    const read = await call(app.baseUrl, "GET", `/api/v1/operations/${op.operationId}`, { key: acme.agent });
    expect(read.body).toEqual(res.body);
  });

  it("failed (not retryable) is terminal: the error is stored, the attempt is failed, and claims replay it", async () => {
    const tool = await createTool({ maxAttempts: 3 });
    const op = await claimNew(tool);

    const res = await complete(op.operationId, { fencingToken: op.token, outcome: "failed", error: { code: "card_declined", message: "Declined" } });

    expect(res.status, res.text).toBe(200);
    expectStatusView(res.body);
    expect(res.body).toMatchObject({ state: "failed", error: { code: "card_declined", message: "Declined" }, result: null, notBefore: null });
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({ state: "failed", attemptCount: 1, error: { code: "card_declined", message: "Declined" }, notBefore: null });
    expect(stored.resultExpiresAt).not.toBeNull();
    expect((await attemptsOf(op.operationId)).map((a) => [a.number, a.outcome])).toEqual([[1, "failed"]]);
    // Attempts were left, but a definite failure is final: the next claim is a replay.
    const again = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ state: "failed", error: { code: "card_declined", message: "Declined" } });
  });

  it("failed + retryable returns to pending with notBefore drawn in [now, now + min(capMs, baseMs·2^(n-1))] for each attempt n", async () => {
    const policy = { maxAttempts: 4, backoff: { baseMs: 200, capMs: 500 } };
    const tool = await createTool(policy);
    const op = await claimNew(tool);
    let token = op.token;

    for (const n of [1, 2, 3]) {
      const res = await complete(op.operationId, { fencingToken: token, outcome: "failed", retryable: true, error: { code: "e503", message: `attempt ${n}` } });

      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ state: "pending", attempts: n, leaseExpiresAt: null, result: null });
      const stored = await operation(op.operationId);
      expect(stored.state).toBe("pending");
      expect(res.body.notBefore).toBe(stored.notBefore!.toISOString());
      // updated_at is the transaction's now(); both columns are rounded to milliseconds.
      const delay = stored.notBefore!.getTime() - stored.updatedAt.getTime();
      const window = Math.min(policy.backoff.capMs, policy.backoff.baseMs * 2 ** (n - 1));
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(window + 1);
      expect((await attemptsOf(op.operationId))[n - 1]).toMatchObject({ number: n, outcome: "retryable_failure" });

      await waitUntil(op.operationId, "backoff over");
      const next = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
      expect(next.status, next.text).toBe(201);
      expect(next.body.attempt.number).toBe(n + 1);
      token = next.body.attempt.fencingToken;
    }
    expect((await auditOf(op.operationId)).filter((e) => e.action === "operation.retry_scheduled")).toHaveLength(3);
  });

  it("failed + retryable on the last attempt makes the operation failed", async () => {
    const tool = await createTool({ maxAttempts: 1, backoff: { baseMs: 1, capMs: 1 } });
    const op = await claimNew(tool);

    const res = await complete(op.operationId, { fencingToken: op.token, outcome: "failed", retryable: true, error: { code: "e503", message: "down" } });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: "failed", notBefore: null, error: { code: "e503", message: "down" } });
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({ state: "failed", notBefore: null, attemptCount: 1 });
    expect(stored.resultExpiresAt).not.toBeNull();
    expect((await attemptsOf(op.operationId)).map((a) => [a.number, a.outcome])).toEqual([[1, "retryable_failure"]]);
    const again = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
    expect(again.status).toBe(200);
    expect(again.body.state).toBe("failed");
  });

  it("unknown makes the operation unknown, and claims then get 409 outcome-unknown", async () => {
    const tool = await createTool();
    const op = await claimNew(tool);

    const res = await complete(op.operationId, { fencingToken: op.token, outcome: "unknown", error: { code: "timeout", message: "provider timed out" } });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: "unknown", leaseExpiresAt: null, result: null });
    expect(await operation(op.operationId)).toMatchObject({ state: "unknown", leaseExpiresAt: null, resultExpiresAt: null });
    expect((await attemptsOf(op.operationId)).map((a) => [a.number, a.outcome])).toEqual([[1, "unknown"]]);
    expect((await auditOf(op.operationId)).map((e) => e.action)).toEqual(["operation.claimed", "operation.unknown"]);
    const again = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
    expectProblem(again, 409, "outcome-unknown");
  });

  it.each([
    { name: "succeeded", report: { outcome: "succeeded", result: { statusCode: 200, body: { ok: true } } } },
    { name: "failed", report: { outcome: "failed", error: { code: "bad", message: "no" } } },
    { name: "failed + retryable", report: { outcome: "failed", retryable: true } },
    { name: "unknown", report: { outcome: "unknown" } },
  ])("the same complete repeated ($name) → 200 with the same view, and nothing changes", async ({ report }) => {
    const tool = await createTool({ backoff: { baseMs: 3_600_000, capMs: 3_600_000 } });
    const op = await claimNew(tool);
    const first = await complete(op.operationId, { fencingToken: op.token, ...report });
    expect(first.status, first.text).toBe(200);
    const before = await snapshot(op.operationId);

    const again = await complete(op.operationId, { fencingToken: op.token, ...report });

    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await snapshot(op.operationId)).toEqual(before);
  });

  // Protocol review, 2026-12-01: `provider: {}` hashed unlike no provider, so its repeat without
  // one was 409 already-resolved and flagged the operation for an operator.
  it("a repeat that differs only by an empty provider is the same complete: 200, nothing flagged", async () => {
    const op = await claimNew(await createTool());
    const report = { fencingToken: op.token, outcome: "succeeded", result: { statusCode: 201, body: { ticket: "T-1" } } };
    const first = await complete(op.operationId, { ...report, provider: {} });
    expect(first.status, first.text).toBe(200);
    const before = await snapshot(op.operationId);

    const again = await complete(op.operationId, report);

    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await snapshot(op.operationId)).toEqual(before);
    expect((await operation(op.operationId)).flaggedAt).toBeNull();
  });

  it.each([
    { name: "failed after succeeded", first: { outcome: "succeeded", result: { body: { ticket: "T-1" } } }, second: { outcome: "failed" }, earlier: "succeeded" },
    {
      name: "succeeded with another result",
      first: { outcome: "succeeded", result: { body: { ticket: "T-1" } } },
      second: { outcome: "succeeded", result: { body: { ticket: "T-2" } } },
      earlier: "succeeded",
    },
    { name: "succeeded after failed", first: { outcome: "failed", error: { code: "declined", message: "no" } }, second: { outcome: "succeeded" }, earlier: "failed" },
  ])(
    "a different complete for the same attempt of a settled operation ($name) → 409 already-resolved; the first report stands, the contradiction is flagged and audited once",
    async ({ first, second, earlier }) => {
      const tool = await createTool();
      const op = await claimNew(tool);
      expect((await complete(op.operationId, { fencingToken: op.token, ...first })).status).toBe(200);
      const before = await snapshot(op.operationId);

      const replies = [await complete(op.operationId, { fencingToken: op.token, ...second }), await complete(op.operationId, { fencingToken: op.token, ...second })];

      for (const res of replies) {
        expectProblem(res, 409, "already-resolved");
        expect(res.body.detail).toBe(`This attempt already reported ${earlier}; the operation is ${before.operation.state}`);
      }
      const after = await snapshot(op.operationId);
      expect(after.operation).toMatchObject({
        state: before.operation.state,
        result: before.operation.result,
        error: before.operation.error,
        resultExpiresAt: before.operation.resultExpiresAt,
        flagReason: `attempt 1 reported ${second.outcome} after it had reported ${earlier}`,
      });
      expect(after.operation.flaggedAt).not.toBeNull();
      expect(after.attempts).toEqual(before.attempts);
      expect(after.audit.slice(before.audit.length)).toMatchObject([
        { action: "operation.complete_conflict", after: { attempt: 1, reportedOutcome: second.outcome, earlierOutcome: earlier } },
      ]);
      const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
      expect(trace?.timeline.filter((e) => e.kind === "flag").map((e) => e.title)).toEqual([`Flagged: attempt 1 reported ${second.outcome} after it had reported ${earlier}`]);
    },
  );

  // API review: these were answered 409 already-resolved ("This attempt already reported a
  // different outcome") and recorded nowhere, although nobody resolved the operation and the token
  // no longer holds it; "failed, retryable" then "succeeded" is the sign a retry may act twice.
  it.each([
    {
      name: "failed (retryable), then a retry started, then succeeded",
      retryFirst: true,
      first: { outcome: "failed", retryable: true, error: { code: "e503", message: "down" } },
      second: { outcome: "succeeded", result: { statusCode: 201, resourceId: "T-late" } },
      reason: "attempt 1 reported succeeded after it had reported failed (retryable) and attempt 2 started; refused (lease-lost)",
      title: "Late report refused: attempt 1 said succeeded after it had reported failed (retryable) and attempt 2 started",
      // Attempt 2 may run the tool a second time: an operator should know (protocol review, 2026-12-01).
      flag: "attempt 1 reported succeeded after attempt 2 started: the tool may have acted twice",
    },
    {
      name: "unknown, then succeeded",
      retryFirst: false,
      first: { outcome: "unknown", error: { code: "timeout", message: "provider timed out" } },
      second: { outcome: "succeeded", result: { statusCode: 201, resourceId: "T-late" } },
      reason: "attempt 1 reported succeeded after it had reported unknown; refused (lease-lost)",
      title: "Late report refused: attempt 1 said succeeded after it had reported unknown",
      flag: null,
    },
  ])("an attempt's second, different report once the operation moved on ($name) → 409 lease-lost, the report is kept as evidence once, nothing else changes but a flag", async ({ retryFirst, first, second, reason, title, flag }) => {
    const tool = await createTool({ maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const op = await claimNew(tool);
    expect((await complete(op.operationId, { fencingToken: op.token, ...first })).status).toBe(200);
    if (retryFirst) {
      await waitUntil(op.operationId, "backoff over");
      const retry = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
      expect([retry.status, retry.body.attempt?.number], retry.text).toEqual([201, 2]);
    }
    const before = await snapshot(op.operationId);

    const replies = [await complete(op.operationId, { fencingToken: op.token, ...second }), await complete(op.operationId, { fencingToken: op.token, ...second })];

    for (const res of replies) expectProblem(res, 409, "lease-lost");
    const after = await snapshot(op.operationId);
    const unflagged = ({ flaggedAt: _f, flagReason: _r, updatedAt: _u, ...rest }: typeof after.operation) => rest;
    expect({ operation: unflagged(after.operation), attempts: after.attempts }).toEqual({ operation: unflagged(before.operation), attempts: before.attempts });
    expect(after.operation.flagReason).toBe(flag);
    expect(after.audit.slice(before.audit.length)).toMatchObject([{ action: "operation.late_report_refused", reason, after: { reportingAttempt: 1, reportedOutcome: "succeeded" } }]);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    expect(trace?.timeline.filter((e) => e.kind === "late-report")).toMatchObject([
      { tone: "bad", title, fields: expect.arrayContaining([expect.objectContaining({ label: "What it means", value: expect.stringContaining("It first said") })]) },
    ]);
  });

  // Code review: before any retry started, "failed, retryable" then "succeeded" left the operation
  // pending, and the next claim ran the tool again.
  it("an attempt that said failed (retryable) and then succeeded, before any retry: 409 lease-lost, and the operation becomes unknown (no blind retry)", async () => {
    const tool = await createTool({ maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const op = await claimNew(tool);
    expect((await complete(op.operationId, { fencingToken: op.token, outcome: "failed", retryable: true, error: { code: "e503", message: "down" } })).status).toBe(200);

    const res = await complete(op.operationId, { fencingToken: op.token, outcome: "succeeded", result: { statusCode: 201, resourceId: "T-late" } });

    expectProblem(res, 409, "lease-lost");
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({ state: "unknown", notBefore: null, attemptCount: 1, error: { code: "contradicting-reports" } });
    expect((await attemptsOf(op.operationId)).map((a) => a.outcome)).toEqual(["retryable_failure"]);
    const [audit] = (await auditOf(op.operationId)).filter((a) => a.action === "operation.unknown");
    expect(audit).toMatchObject({ after: { reportedOutcome: "succeeded", earlierOutcome: "retryable_failure", result: { resourceId: "T-late" } } });
    await waitUntil(op.operationId, "backoff over");
    expectProblem(await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args }), 409, "outcome-unknown");
    // The same report again changes nothing more, and is not kept a second time (protocol review, 2026-12-02).
    expectProblem(await complete(op.operationId, { fencingToken: op.token, outcome: "succeeded", result: { statusCode: 201, resourceId: "T-late" } }), 409, "lease-lost");
    expect((await auditOf(op.operationId)).filter((a) => a.action === "operation.unknown")).toHaveLength(1);
    expect((await auditOf(op.operationId)).filter((a) => a.action === "operation.late_report_refused")).toHaveLength(0);
  });

  // Review, 2026-12-02: only flagged, and the claim ignores flags, so the third attempt ran the tool again.
  it("an earlier attempt's late succeeded while a later one waits to retry (it failed, retryable, too): the operation becomes unknown, no third run", async () => {
    const tool = await createTool({ maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const op = await claimNew(tool);
    const failRetryable = { outcome: "failed", retryable: true, error: { code: "e503", message: "down" } };
    expect((await complete(op.operationId, { fencingToken: op.token, ...failRetryable })).status).toBe(200);
    await waitUntil(op.operationId, "backoff over");
    const second = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
    expect([second.status, second.body.attempt?.number], second.text).toEqual([201, 2]);
    expect((await complete(op.operationId, { fencingToken: second.body.attempt.fencingToken, ...failRetryable })).body.state).toBe("pending");

    const late = await complete(op.operationId, { fencingToken: op.token, outcome: "succeeded", result: { statusCode: 201, resourceId: "T-first" } });

    expectProblem(late, 409, "lease-lost");
    expect(await operation(op.operationId)).toMatchObject({
      state: "unknown",
      notBefore: null,
      error: { code: "contradicting-reports", message: "attempt 1 reported succeeded after attempt 2 started, while the operation waits to retry: the effect may have happened" },
    });
    await waitUntil(op.operationId, "backoff over");
    expectProblem(await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args }), 409, "outcome-unknown");
  });

  // Review, 2026-12-01: "unknown" says the effect may have happened as much as "succeeded" does;
  // it was a late report (lease-lost, audited) and the retry ran.
  it("an attempt that said failed (retryable) and then unknown, before any retry: the operation becomes unknown too", async () => {
    const tool = await createTool({ maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const op = await claimNew(tool);
    expect((await complete(op.operationId, { fencingToken: op.token, outcome: "failed", retryable: true, error: { code: "e503", message: "down" } })).status).toBe(200);

    const res = await complete(op.operationId, { fencingToken: op.token, outcome: "unknown", error: { code: "timeout", message: "the provider did not answer" } });

    expectProblem(res, 409, "lease-lost");
    expect(await operation(op.operationId)).toMatchObject({
      state: "unknown",
      notBefore: null,
      error: { code: "contradicting-reports", message: "attempt 1 reported failed (retryable), then unknown: the effect may have happened" },
    });
    await waitUntil(op.operationId, "backoff over");
    expectProblem(await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args }), 409, "outcome-unknown");
    expect(await attemptsOf(op.operationId)).toHaveLength(1);
  });

  // Review, 2026-12-01: an operator resolved "retry" (the lease had run out, nothing reported), and
  // the attempt's late "succeeded" was refused as lease-lost, unflagged: the next claim ran the
  // tool again. It contradicts the operator's decision, as a report against any resolution does.
  it.each([
    { name: "the lease ran out without a report", first: null },
    { name: "the attempt had reported unknown", first: { outcome: "unknown", error: { code: "timeout", message: "no answer" } } },
  ])("after an operator resolved retry ($name), the attempt's late succeeded → 409 already-resolved, flagged, unknown: no retry runs", async ({ first }) => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never", maxAttempts: 3 });
    const op = await claimNew(tool);
    if (first) expect((await complete(op.operationId, { fencingToken: op.token, ...first })).status).toBe(200);
    else await waitUntil(op.operationId, "lease expired");
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, {
      key: acme.admin,
      body: { outcome: "retry", reason: "nothing at the provider yet" },
    });
    expect([resolved.status, resolved.body.state], resolved.text).toEqual([200, "pending"]);

    const res = await complete(op.operationId, { fencingToken: op.token, outcome: "succeeded", result: { statusCode: 201, resourceId: "T-late" } });

    expectProblem(res, 409, "already-resolved");
    expect(res.body.detail).toContain("An operator resolved the operation as retry");
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({
      state: "unknown",
      flagReason: "attempt 1 reported succeeded after an operator resolved the operation as retry",
      error: { code: "contradicting-reports", message: "attempt 1 reported succeeded after an operator resolved the operation as retry: the effect may have happened" },
    });
    expect(stored.flaggedAt).not.toBeNull();
    const audit = (await auditOf(op.operationId)).filter((a) => a.action === "operation.unknown").at(-1);
    expect(audit).toMatchObject({ before: { state: "pending" }, after: { state: "unknown", reportedOutcome: "succeeded", resolution: "retry", result: { resourceId: "T-late" } } });
    expectProblem(await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args }), 409, "outcome-unknown");
    expect(await attemptsOf(op.operationId)).toHaveLength(1);
    const metricsText = (await call(app.baseUrl, "GET", "/api/metrics")).text;
    expect(metricsText).toMatch(/tollgate_unknowns_total\{cause="contradicts-retry"\} [1-9]/);
  });

  it("a retry resolution still on the row from an earlier attempt is not about the next one: its own failed (retryable) then succeeded is lease-lost, unflagged", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never", maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const first = await claimNew(tool);
    await waitUntil(first.operationId, "lease expired");
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${first.operationId}/resolve`, { key: acme.admin, body: { outcome: "retry", reason: "retry it" } });
    expect(resolved.status, resolved.text).toBe(200);
    const second = await claim(app.baseUrl, acme.agent, first.idem, { tool, args: first.args });
    expect([second.status, second.body.attempt?.number], second.text).toEqual([201, 2]);
    await restoreRetryResolution(first.operationId);
    const token = second.body.attempt.fencingToken as string;
    expect((await complete(first.operationId, { fencingToken: token, outcome: "failed", retryable: true, error: { code: "e503", message: "down" } })).status).toBe(200);

    const res = await complete(first.operationId, { fencingToken: token, outcome: "succeeded", result: { statusCode: 201 } });

    expectProblem(res, 409, "lease-lost");
    expect(await operation(first.operationId)).toMatchObject({
      state: "unknown",
      flaggedAt: null,
      error: { message: "attempt 2 reported failed (retryable), then succeeded: the effect may have happened" },
    });
  });

  // Review, 2026-12-01: the operator's retry resolution stayed on the row (on rows from before
  // 20261201190000 it still may); the next attempt's own contradicting reports were judged against
  // it (flagged and audited again on each repeat, its first report then "agreeing" with the
  // resolution and audited too) instead of its own report.
  it("after an operator's retry, the next attempt's contradicting report is judged against its own first report: flagged and audited once", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never", maxAttempts: 3 });
    const op = await claimNew(tool);
    await waitUntil(op.operationId, "lease expired");
    expect((await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, { key: acme.admin, body: { outcome: "retry", reason: "retry it" } })).status).toBe(200);
    const second = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
    expect(second.status, second.text).toBe(201);
    await restoreRetryResolution(op.operationId);
    const token = second.body.attempt.fencingToken as string;
    const succeeded = { fencingToken: token, outcome: "succeeded", result: { statusCode: 201, resourceId: "T-2" } };
    const failed = { fencingToken: token, outcome: "failed", error: { code: "e500", message: "it broke" } };
    expect((await complete(op.operationId, succeeded)).status).toBe(200);

    const contradicting = [await complete(op.operationId, failed), await complete(op.operationId, failed)];
    const firstAgain = await complete(op.operationId, succeeded);

    for (const res of contradicting) {
      expectProblem(res, 409, "already-resolved");
      expect(res.body.detail).toBe("This attempt already reported succeeded; the operation is succeeded");
    }
    expect(firstAgain.status, firstAgain.text).toBe(200);
    const actions = (await auditOf(op.operationId)).map((a) => a.action);
    expect(actions.filter((a) => a === "operation.complete_conflict")).toHaveLength(1);
    expect(actions).not.toContain("operation.complete_agreed");
    expect(await operation(op.operationId)).toMatchObject({ state: "succeeded", flagReason: "attempt 2 reported failed after it had reported succeeded" });
  });

  // Code review: after an operator settled an operation whose attempt had reported unknown, the
  // attempt's real answer was taken as contradicting its own "unknown" and flagged, agreeing or not.
  it.each([
    { name: "agrees", second: { outcome: "succeeded" }, status: 200 },
    { name: "contradicts", second: { outcome: "failed", error: { code: "x", message: "late" } }, status: 409 },
  ])("an attempt that reported unknown, after an operator resolved it as succeeded, is judged against the resolution ($name)", async ({ second, status }) => {
    const op = await claimNew(await createTool());
    expect((await complete(op.operationId, { fencingToken: op.token, outcome: "unknown" })).status).toBe(200);
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, { key: acme.admin, body: { outcome: "succeeded", reason: "found it", resourceId: "T-9" } });
    expect(resolved.status, resolved.text).toBe(200);

    const res = await complete(op.operationId, { fencingToken: op.token, ...second });

    expect(res.status, res.text).toBe(status);
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("succeeded");
    if (status === 200) {
      expect(stored.flaggedAt).toBeNull();
      expect((await auditOf(op.operationId)).map((a) => a.action)).toContain("operation.complete_agreed");
    } else {
      expectProblem(res, 409, "already-resolved");
      expect(stored.flagReason).toBe("attempt 1 reported failed after the operation was resolved succeeded");
    }
  });

  it("an operator resolved first: a contradicting complete → 409 already-resolved and the conflict is recorded; an agreeing one → 200", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never" });
    const [a, b] = [await claimNew(tool), await claimNew(tool)];
    for (const op of [a, b]) {
      await waitUntil(op.operationId, "lease expired");
      const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, {
        key: acme.admin,
        body: { outcome: "succeeded", reason: "ticket found in the provider's console", resourceId: "T-77" },
      });
      expect(resolved.status, resolved.text).toBe(200);
    }

    const contradicting = await complete(a.operationId, { fencingToken: a.token, outcome: "failed", error: { code: "e", message: "late" } });
    const agreeing = await complete(b.operationId, { fencingToken: b.token, outcome: "succeeded" });

    expectProblem(contradicting, 409, "already-resolved");
    const storedA = await operation(a.operationId);
    expect(storedA).toMatchObject({ state: "succeeded", result: { resourceId: "T-77" } });
    expect(storedA.flaggedAt).not.toBeNull();
    expect((await auditOf(a.operationId)).map((e) => e.action)).toContain("operation.complete_conflict");
    expect(agreeing.status, agreeing.text).toBe(200);
    expect(agreeing.body.state).toBe("succeeded");
    expect((await operation(b.operationId)).flaggedAt).toBeNull();
  });

  // Protocol review, 2026-12-01: only audited, so no queue showed that the retry an operator
  // allowed ran a tool whose first call had gone through after all.
  it("a late success from the attempt before an operator's retry flags the operation: the retry may have acted a second time", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never" });
    const op = await claimNew(tool);
    await waitUntil(op.operationId, "lease expired");
    expectProblem(await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args }), 409, "outcome-unknown");
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, { key: acme.admin, body: { outcome: "retry", reason: "nothing at the provider" } });
    expect(resolved.status, resolved.text).toBe(200);
    const second = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
    expect([second.status, second.body.attempt?.number], second.text).toEqual([201, 2]);

    const late = await complete(op.operationId, { fencingToken: op.token, outcome: "succeeded", result: { resourceId: "T-first" } });

    expectProblem(late, 409, "lease-lost");
    expect(await operation(op.operationId)).toMatchObject({
      state: "processing",
      flagReason: "attempt 1 reported succeeded after attempt 2 started: the tool may have acted twice",
    });
    expect((await attemptsOf(op.operationId)).map((a) => [a.number, a.outcome])).toEqual([
      [1, "lease_lost"],
      [2, null],
    ]);
  });

  // Attempt 1's lease runs out and attempt 2 takes over (the provider dedupes on the downstream key).
  async function takenOver() {
    const tool = await createTool({ leaseSeconds: 1, takeover: "deduplicated" });
    const op = await claimNew(tool);
    await waitUntil(op.operationId, "lease expired");
    const takeover = await claim(app.baseUrl, acme.agent, op.idem, { tool, args: op.args });
    expect(takeover.status, takeover.text).toBe(201);
    return { op, takeover };
  }

  // Review, 2026-12-01: a provider that dedupes does not make a success under a failure harmless:
  // every replay says nothing happened.
  it("a taken-over attempt's late success after the operation failed is flagged, whatever the takeover policy", async () => {
    const { op, takeover } = await takenOver();
    expect((await complete(op.operationId, { fencingToken: takeover.body.attempt.fencingToken, outcome: "failed", error: { code: "declined", message: "no" } })).status).toBe(200);

    expectProblem(await complete(op.operationId, { fencingToken: op.token, outcome: "succeeded" }), 409, "lease-lost");

    expect(await operation(op.operationId)).toMatchObject({ state: "failed", flagReason: "attempt 1 reported succeeded after attempt 2 started, but the operation is failed" });
  });

  it("a stale token (its attempt was taken over) → 409 lease-lost, and nothing changes; the refused report is kept in the audit log as evidence, once", async () => {
    const { op } = await takenOver();
    const before = await snapshot(op.operationId);
    const report = { fencingToken: op.token, outcome: "succeeded", result: { body: { from: "stale" }, resourceId: "ch_stale" }, provider: { requestId: "req_stale" } };

    const replies = [await complete(op.operationId, report), await complete(op.operationId, report)];

    for (const res of replies) expectProblem(res, 409, "lease-lost");
    const after = await snapshot(op.operationId);
    expect({ operation: after.operation, attempts: after.attempts }).toEqual({ operation: before.operation, attempts: before.attempts });
    expect(after.audit.slice(0, before.audit.length)).toEqual(before.audit);
    expect(after.audit.slice(before.audit.length)).toMatchObject([
      {
        action: "operation.late_report_refused",
        actor: expect.stringMatching(/^api-key:/),
        after: { reportingAttempt: 1, newestAttempt: 2, reportedOutcome: "succeeded", result: { resourceId: "ch_stale" }, provider: { requestId: "req_stale" } },
        reason: "attempt 1 reported succeeded after attempt 2 took over; refused (lease-lost)",
      },
    ]);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: op.operationId });
    expect(trace?.timeline.filter((e) => e.kind === "late-report")).toMatchObject([
      { tone: "bad", title: "Late report refused: attempt 1 said succeeded after attempt 2 took over", json: [{ label: "Result reported", value: report.result }] },
    ]);
  });

  it.each([
    { name: "another operation's token", token: async () => (await claimNew(await createTool())).token },
    { name: "a token never issued", token: async () => "999999999999" },
  ])("a token that never held this operation ($name) → 409 lease-lost, and nothing changes", async ({ token }) => {
    const tool = await createTool();
    const op = await claimNew(tool);
    const foreign = await token();
    const before = await snapshot(op.operationId);

    const res = await complete(op.operationId, { fencingToken: foreign, outcome: "succeeded" });

    expectProblem(res, 409, "lease-lost");
    expect(await snapshot(op.operationId)).toEqual(before);
  });

  it("a result nested deeper than 128 levels → 400 (the canonical form would overflow the stack), and nothing changes; 128 is fine", async () => {
    const op = await claimNew(await createTool());
    const before = await snapshot(op.operationId);
    // Sent as text: the test's own JSON.stringify would overflow the stack at this depth too.
    const withBody = (depth: number) =>
      call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/complete`, {
        key: acme.agent,
        headers: { "content-type": "application/json" },
        rawBody: `{"fencingToken":"${op.token}","outcome":"succeeded","result":{"body":${"[".repeat(depth)}${"]".repeat(depth)}}}`,
      });

    expectProblem(await withBody(10_000), 400, "invalid-request");
    expect(await snapshot(op.operationId)).toEqual(before);

    // The request object and `result` are two levels, so the deepest accepted body has 126 of its own.
    expectProblem(await withBody(127), 400, "invalid-request");
    const ok = await withBody(126);
    expect(ok.status, ok.text).toBe(200);
  });

  it.each([
    { name: "one past the bigint maximum, as a string", token: "9223372036854775808" },
    { name: "nineteen nines", token: "9999999999999999999" },
    { name: "a number past it", token: 1e30 },
  ])("a token no sequence can issue ($name) → 400 on complete, heartbeat and side effects, and nothing changes", async ({ token }) => {
    const op = await claimNew(await createTool());
    const before = await snapshot(op.operationId);

    const answers = [
      await complete(op.operationId, { fencingToken: token, outcome: "succeeded" }),
      await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/heartbeat`, { key: acme.agent, body: { fencingToken: token } }),
      await call(app.baseUrl, "PUT", `/api/v1/operations/${op.operationId}/side-effects/charge`, {
        key: acme.agent,
        body: { fencingToken: token, provider: "stripe", state: "intended" },
      }),
    ];
    for (const res of answers) {
      expectProblem(res, 400, "invalid-request");
      expect(res.body.errors[0].path).toBe("fencingToken");
    }
    expect(await snapshot(op.operationId)).toEqual(before);
  });
});

describe("heartbeat: the lease holder extends its lease", () => {
  it("extends the lease of the operation and of its attempt", async () => {
    const tool = await createTool({ leaseSeconds: 30 });
    const op = await claimNew(tool);
    const before = await operation(op.operationId);
    await new Promise((r) => setTimeout(r, 50));

    const res = await heartbeat(op.operationId, op.token);

    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(["leaseExpiresAt"]);
    expect(new Date(res.body.leaseExpiresAt).getTime()).toBeGreaterThan(before.leaseExpiresAt!.getTime());
    const after = await operation(op.operationId);
    expect(after.leaseExpiresAt!.toISOString()).toBe(res.body.leaseExpiresAt);
    expect(after).toMatchObject({ state: "processing", fencingToken: before.fencingToken, heartbeatCount: 1 });
    const attempts = await attemptsOf(op.operationId);
    expect(attempts[0]!.leaseExpiresAt.toISOString()).toBe(res.body.leaseExpiresAt);
  });

  it.each([
    { name: "a stale token", setup: async (_op: Claimed) => "999999999999" },
    {
      name: "an operation that succeeded",
      setup: async (op: Claimed) => {
        await complete(op.operationId, { fencingToken: op.token, outcome: "succeeded" });
        return op.token;
      },
    },
    {
      name: "an operation pending a retry",
      setup: async (op: Claimed) => {
        await complete(op.operationId, { fencingToken: op.token, outcome: "failed", retryable: true });
        return op.token;
      },
    },
    {
      name: "an unknown operation",
      setup: async (op: Claimed) => {
        await complete(op.operationId, { fencingToken: op.token, outcome: "unknown" });
        return op.token;
      },
    },
  ])("$name → 409 lease-lost, and the lease is not extended", async ({ setup }) => {
    const tool = await createTool({ backoff: { baseMs: 3_600_000, capMs: 3_600_000 } });
    const op = await claimNew(tool);
    const token = await setup(op);
    const before = await snapshot(op.operationId);

    const res = await heartbeat(op.operationId, token);

    expectProblem(res, 409, "lease-lost");
    expect(await snapshot(op.operationId)).toEqual(before);
  });
});

describe("read: the status view", () => {
  it("GET by id and GET by tool + key show exactly the contract's fields, never the fencing token nor the key", async () => {
    const tool = await createTool();
    const op = await claimNew(tool, { title: "read me" });
    const digest = sha256Hex(op.idem);

    const byId = await call(app.baseUrl, "GET", `/api/v1/operations/${op.operationId}`, { key: acme.agent });
    const byKey = await call(
      app.baseUrl,
      "GET",
      `/api/v1/operations?tool=${encodeURIComponent(tool)}&idempotencyKey=${encodeURIComponent(op.idem)}`,
      { key: acme.agent },
    );

    // The key in the claim's header instead of the URL (kept out of access logs); both, differing: 400.
    const byHeader = await call(app.baseUrl, "GET", `/api/v1/operations?tool=${encodeURIComponent(tool)}`, { key: acme.agent, idempotencyKey: op.idem });
    const both = await call(app.baseUrl, "GET", `/api/v1/operations?tool=${encodeURIComponent(tool)}&idempotencyKey=other`, { key: acme.agent, idempotencyKey: op.idem });
    expect([both.status, both.body.code], both.text).toEqual([400, "invalid-request"]);

    const stored = await operation(op.operationId);
    for (const res of [byId, byKey, byHeader]) {
      expect(res.status, res.text).toBe(200);
      expectStatusView(res.body);
      expect(res.body).toEqual({
        operationId: op.operationId,
        tool,
        state: "processing",
        attempts: 1,
        leaseExpiresAt: stored.leaseExpiresAt!.toISOString(),
        notBefore: null,
        downstreamKey: op.downstreamKey,
        result: null,
        error: null,
        resultExpiresAt: null,
        createdAt: stored.createdAt.toISOString(),
        updatedAt: stored.updatedAt.toISOString(),
        resolution: null,
      });
      expect(res.text).not.toContain("fencingToken");
      expect(res.text).not.toContain(`"${op.token}"`);
      expect(res.text).not.toContain(op.idem);
      expect(res.text).not.toContain(digest);
    }
  });

  it("approver and admin keys of the tenant may read by id", async () => {
    const op = await claimNew(await createTool());

    for (const key of [acme.approver, acme.admin]) {
      const res = await call(app.baseUrl, "GET", `/api/v1/operations/${op.operationId}`, { key });
      expect(res.status, res.text).toBe(200);
      expect(res.body.operationId).toBe(op.operationId);
    }
  });

  it("another principal of the tenant does not find the operation by its key (the key is scoped to its principal)", async () => {
    const tool = await createTool();
    const op = await claimNew(tool);

    const res = await call(app.baseUrl, "GET", `/api/v1/operations?tool=${tool}&idempotencyKey=${encodeURIComponent(op.idem)}`, { key: acme.agent2 });

    expectProblem(res, 404, "operation-not-found");
  });
});

describe("tenancy: another tenant's operation is 404", () => {
  it.each([
    { name: "GET by id", send: (op: Claimed) => call(app.baseUrl, "GET", `/api/v1/operations/${op.operationId}`, { key: globex.agent }) },
    { name: "complete", send: (op: Claimed) => complete(op.operationId, { fencingToken: op.token, outcome: "succeeded" }, globex.agent) },
    { name: "heartbeat", send: (op: Claimed) => heartbeat(op.operationId, op.token, globex.agent) },
  ])("$name with another tenant's operation id → 404, and nothing changes", async ({ send }) => {
    const op = await claimNew(await createTool());
    const before = await snapshot(op.operationId);

    const res = await send(op);

    expectProblem(res, 404, "operation-not-found");
    expect(res.text).not.toContain(op.downstreamKey);
    expect(await snapshot(op.operationId)).toEqual(before);
  });
});
