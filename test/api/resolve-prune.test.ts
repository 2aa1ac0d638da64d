import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asciiOnlyJson, call, claim, type Reply } from "../support/http";
import { createTool as createToolIn, expectProblem, type Policy } from "../support/protocol";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { waitUntilLeaseExpired } from "../support/wait-for-lease";

// Operator resolution of unknown outcomes (AGENT-API.md "Operator actions": resolve) and the
// prune command that forgets replayable results after their retention ("After
// resultExpiresAt the record may be pruned, and the same key then starts a new operation").

let app: TestApp;
let acme: TenantKeys;
let globex: TenantKeys;
let adminActor: string;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
  const admin = await app.db.apiKey.findFirstOrThrow({ where: { tenantId: acme.tenantId, principal: "acme-admin" } });
  adminActor = `api-key:${admin.id}`;
});
afterAll(async () => {
  await app?.stop();
});

const createTool = (policy: Policy = {}) => createToolIn(app.baseUrl, [acme], { policy });

type Claimed = { operationId: string; token: string; downstreamKey: string; idem: string; tool: string; args: Record<string, unknown> };

async function claimNew(tool: string, args: Record<string, unknown> = { title: "Refund order 66" }): Promise<Claimed> {
  const idem = `idem-${randomUUID()}`;
  const res = await claim(app.baseUrl, acme.agent, idem, { tool, args });
  expect(res.status, res.text).toBe(201);
  return { operationId: res.body.operationId, token: res.body.attempt.fencingToken, downstreamKey: res.body.downstreamKey, idem, tool, args };
}

function complete(op: Claimed, body: Record<string, unknown>): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/complete`, { key: acme.agent, body: { fencingToken: op.token, ...body } });
}

async function unknownOperation(policy: Policy = {}): Promise<Claimed> {
  const op = await claimNew(await createTool(policy));
  const res = await complete(op, { outcome: "unknown", error: { code: "timeout", message: "provider timed out" } });
  expect(res.body.state).toBe("unknown");
  return op;
}

function resolve(operationId: string, body: unknown, key = acme.admin): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/resolve`, { key, body });
}

const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });
const attemptsOf = (operationId: string) => app.db.attempt.findMany({ where: { operationId }, orderBy: { number: "asc" } });
const auditOf = (operationId: string) =>
  app.db.auditEvent.findMany({ where: { targetType: "operation", targetId: operationId }, orderBy: { id: "asc" } });

async function snapshot(operationId: string) {
  return { operation: await operation(operationId), attempts: await attemptsOf(operationId), audit: await auditOf(operationId) };
}

// Every resolution leaves exactly one audit event naming who, from what, to what, and why.
async function expectResolutionAudited(operationId: string, expected: { from: string; to: string; outcome: string; reason: string }) {
  const events = (await auditOf(operationId)).filter((e) => e.action === "operation.resolved");
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({
    actor: adminActor,
    before: { state: expected.from },
    after: { state: expected.to, outcome: expected.outcome, via: "operator" },
    reason: expected.reason,
  });
}

const HOUR_MS = 3_600_000;

describe("resolve: an operator settles an unknown outcome", () => {
  it("unknown → succeeded stores the resolution (by, via, reason, resourceId, evidence) and claims then replay that result", async () => {
    const op = await unknownOperation({ resultRetentionHours: 2 });
    const reason = "Ticket T-42 exists in the provider's console";

    const res = await resolve(op.operationId, { outcome: "succeeded", reason, resourceId: "T-42", evidence: "screenshot-2041.png" });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      operationId: op.operationId,
      state: "succeeded",
      result: { resourceId: "T-42" },
      error: null,
      leaseExpiresAt: null,
      resolution: { outcome: "succeeded", by: adminActor, via: "operator", reason, resourceId: "T-42", evidence: "screenshot-2041.png", fromState: "unknown" },
    });
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({
      state: "succeeded",
      result: { resourceId: "T-42" },
      resolution: { outcome: "succeeded", by: adminActor, via: "operator", reason, resourceId: "T-42", evidence: "screenshot-2041.png" },
    });
    expect(stored.resultExpiresAt!.getTime() - stored.completedAt!.getTime()).toBe(2 * HOUR_MS);
    await expectResolutionAudited(op.operationId, { from: "unknown", to: "succeeded", outcome: "succeeded", reason });
    const events = await auditOf(op.operationId);
    expect(events.at(-1)!.after).toMatchObject({ resourceId: "T-42", evidence: "screenshot-2041.png" });

    const replays = [
      await claim(app.baseUrl, acme.agent, op.idem, { tool: op.tool, args: op.args }),
      await claim(app.baseUrl, acme.agent, op.idem, { tool: op.tool, args: op.args }),
    ];
    for (const replay of replays) {
      expect(replay.status, replay.text).toBe(200);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.text).toBe(replays[0]!.text);
    }
    expect(replays[0]!.body).toMatchObject({ operationId: op.operationId, state: "succeeded", result: { resourceId: "T-42" } });
  });

  it("accepts every text at its longest, beyond ASCII and written as \\u escapes (Python's json.dumps): not a 413", async () => {
    const op = await unknownOperation();
    const input = { outcome: "succeeded", reason: "確認済".repeat(666) + "み", resourceId: "証".repeat(500), evidence: "🧾".repeat(2000) };
    const rawBody = asciiOnlyJson(input);
    expect(rawBody.length).toBeGreaterThan(38 * 1024);

    const res = await call(app.baseUrl, "POST", `/api/v1/operations/${op.operationId}/resolve`, {
      key: acme.admin,
      rawBody,
      headers: { "content-type": "application/json" },
    });

    expect(res.status, res.text).toBe(200);
    const stored = await operation(op.operationId);
    expect(stored.state).toBe("succeeded");
    expect(stored.resolution).toMatchObject({ reason: input.reason, resourceId: input.resourceId, evidence: input.evidence });
  });

  it("unknown → failed makes it terminal with the reason as the error, and claims replay the failure", async () => {
    const op = await unknownOperation();
    const reason = "The provider has no record of the charge";

    const res = await resolve(op.operationId, { outcome: "failed", reason });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: "failed", resolution: { outcome: "failed", reason, fromState: "unknown" } });
    const stored = await operation(op.operationId);
    expect(stored).toMatchObject({ state: "failed", error: { code: "resolved-failed", message: reason } });
    expect(stored.resultExpiresAt).not.toBeNull();
    await expectResolutionAudited(op.operationId, { from: "unknown", to: "failed", outcome: "failed", reason });
    const replay = await claim(app.baseUrl, acme.agent, op.idem, { tool: op.tool, args: op.args });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toMatchObject({ state: "failed", error: { code: "resolved-failed" } });
  });

  it("unknown → retry puts it back to pending, and the next claim gets attempt n+1 even when attempts were exhausted", async () => {
    const op = await unknownOperation({ maxAttempts: 1 });
    const reason = "Confirmed with the provider that nothing was created";

    const res = await resolve(op.operationId, { outcome: "retry", reason });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: "pending", resolution: { outcome: "retry", fromState: "unknown" } });
    // No backoff: a retry the operator asked for may be claimed at once. (not_before was the
    // resolve's now(), its transaction's start, and a claim that had waited on the row lock, with
    // an earlier start, answered 429 retry-backoff: race probe.)
    expect(await operation(op.operationId)).toMatchObject({ state: "pending", resultExpiresAt: null, completedAt: null, notBefore: null });
    await expectResolutionAudited(op.operationId, { from: "unknown", to: "pending", outcome: "retry", reason });

    const next = await claim(app.baseUrl, acme.agent, op.idem, { tool: op.tool, args: op.args });
    expect(next.status, next.text).toBe(201);
    expect(next.body).toMatchObject({ operationId: op.operationId, attempt: { number: 2 }, downstreamKey: op.downstreamKey });
    expect(BigInt(next.body.attempt.fencingToken)).toBeGreaterThan(BigInt(op.token));
    expect((await attemptsOf(op.operationId)).map((a) => [a.number, a.outcome])).toEqual([
      [1, "unknown"],
      [2, null],
    ]);
  });

  // An operation runs at most 1,000 attempts (the operation_attempts_range CHECK). A retry past
  // that raised the CHECK's violation: a 500 for the operator's form.
  it("a retry of an operation that has run its 1,000 attempts is refused with 409, nothing changes, and it can still be settled", async () => {
    const op = await unknownOperation();
    await app.db.$executeRaw`UPDATE operation SET attempt_count = 1000, max_attempts = 1000 WHERE id = ${op.operationId}`;
    const before = await operation(op.operationId);
    const audits = (await auditOf(op.operationId)).length;

    const res = await resolve(op.operationId, { outcome: "retry", reason: "try once more" });

    expectProblem(res, 409, "invalid-state");
    expect(res.body.detail).toContain("1000 attempts");
    expect(res.body).toMatchObject({ operationId: op.operationId, state: "unknown", attempts: 1000 });
    expect(await operation(op.operationId)).toEqual(before);
    expect(await auditOf(op.operationId)).toHaveLength(audits);

    const settled = await resolve(op.operationId, { outcome: "failed", reason: "nothing at the provider" });
    expect([settled.status, settled.body.state], settled.text).toEqual([200, "failed"]);
  });

  // Protocol review, 2026-12-01: the result of the report that made the outcome unknown (a
  // timeout's 504) stayed as the operation's result, and every replay then told the agent the
  // operation succeeded, or failed, with that 504.
  it("a resolution states its own result: the unknown report's result is not replayed as the outcome's, and the audit keeps it", async () => {
    const timeout = { statusCode: 504, body: { error: "gateway timeout" } };
    for (const outcome of ["succeeded", "failed"] as const) {
      const op = await claimNew(await createTool());
      expect((await complete(op, { outcome: "unknown", result: timeout, error: { code: "timeout", message: "504" } })).status).toBe(200);
      expect((await operation(op.operationId)).result).toMatchObject(timeout);

      const res = await resolve(op.operationId, { outcome, reason: "checked the provider", ...(outcome === "succeeded" ? { resourceId: "T-9" } : {}) });
      expect(res.status, res.text).toBe(200);

      const replay = await claim(app.baseUrl, acme.agent, op.idem, { tool: op.tool, args: op.args });
      expect([replay.status, replay.body.state], replay.text).toEqual([200, outcome]);
      expect(replay.body.result).toEqual(outcome === "succeeded" ? { statusCode: null, body: null, resourceId: "T-9" } : null);
      const resolved = (await auditOf(op.operationId)).filter((e) => e.action === "operation.resolved");
      expect(resolved.map((e) => (e.before as { result?: unknown }).result)).toEqual([{ ...timeout, resourceId: null }]);
    }
  });

  it("an operator's retry is the resolution only until the next attempt starts: the outcome that attempt reports is not 'resolved as retry'", async () => {
    const op = await unknownOperation();
    expect((await resolve(op.operationId, { outcome: "retry", reason: "nothing at the provider" })).status).toBe(200);
    expect((await operation(op.operationId)).resolution).toMatchObject({ outcome: "retry" });

    const next = await claim(app.baseUrl, acme.agent, op.idem, { tool: op.tool, args: op.args });
    expect(next.status, next.text).toBe(201);
    expect((await operation(op.operationId)).resolution).toBeNull();
    const done = await complete({ ...op, token: next.body.attempt.fencingToken }, { outcome: "succeeded", result: { body: { ok: true } } });
    expect(done.body).toMatchObject({ state: "succeeded", resolution: null });
    // The decision stays in the audit log, and so on the trace.
    await expectResolutionAudited(op.operationId, { from: "unknown", to: "pending", outcome: "retry", reason: "nothing at the provider" });
  });

  it("processing with an expired lease may be resolved; the stalled attempt is marked lease_lost", async () => {
    const op = await claimNew(await createTool({ leaseSeconds: 1, takeover: "never" }));
    await waitUntilLeaseExpired(app.db, op.operationId);
    const reason = "The worker crashed; the provider shows the refund";

    const res = await resolve(op.operationId, { outcome: "succeeded", reason, resourceId: "re_1" });

    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: "succeeded", resolution: { fromState: "processing" } });
    expect((await attemptsOf(op.operationId)).map((a) => [a.number, a.outcome])).toEqual([[1, "lease_lost"]]);
    await expectResolutionAudited(op.operationId, { from: "processing", to: "succeeded", outcome: "succeeded", reason });
  });

  it.each([
    { name: "processing with a live lease", make: async () => claimNew(await createTool({ leaseSeconds: 60 })) },
    {
      name: "succeeded",
      make: async () => {
        const op = await claimNew(await createTool());
        await complete(op, { outcome: "succeeded", result: { body: { ok: true } } });
        return op;
      },
    },
    {
      name: "pending a retry",
      make: async () => {
        const op = await claimNew(await createTool({ backoff: { baseMs: 3_600_000, capMs: 3_600_000 } }));
        await complete(op, { outcome: "failed", retryable: true });
        return op;
      },
    },
  ])("from $name → 409 invalid-state, and nothing changes", async ({ make }) => {
    const op = await make();
    const before = await snapshot(op.operationId);

    const res = await resolve(op.operationId, { outcome: "failed", reason: "operator thinks so" });

    expectProblem(res, 409, "invalid-state");
    expect(await snapshot(op.operationId)).toEqual(before);
  });

  it.each([
    { name: "missing", body: { outcome: "succeeded" } },
    { name: "empty", body: { outcome: "succeeded", reason: "" } },
    { name: "blank", body: { outcome: "succeeded", reason: "   \t " } },
  ])("a $name reason → 400 invalid-request, and nothing changes", async ({ body }) => {
    const op = await unknownOperation();
    const before = await snapshot(op.operationId);

    const res = await resolve(op.operationId, body);

    expectProblem(res, 400, "invalid-request");
    expect(await snapshot(op.operationId)).toEqual(before);
  });

  it.each([
    { name: "an agent key", key: () => acme.agent, status: 403, code: "forbidden" },
    { name: "an approver key", key: () => acme.approver, status: 403, code: "forbidden" },
    { name: "another tenant's admin key", key: () => globex.admin, status: 404, code: "operation-not-found" },
  ])("$name → $status $code, and nothing changes", async ({ key, status, code }) => {
    const op = await unknownOperation();
    const before = await snapshot(op.operationId);

    const res = await resolve(op.operationId, { outcome: "succeeded", reason: "trust me" }, key());

    expectProblem(res, status, code);
    expect(await snapshot(op.operationId)).toEqual(before);
  });
});

describe("prune: forgetting replayable results after their retention", () => {
  const projectRoot = path.resolve(import.meta.dirname, "..", "..");

  async function runPrune(): Promise<{ stdout: string; stderr: string }> {
    return promisify(execFile)(path.join(projectRoot, "node_modules", ".bin", "tsx"), ["lib/cli/main.ts", "prune"], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: app.url },
      timeout: 60_000,
    });
  }

  // Simulates time passing: the stored result's retention ran out (and, for live states, an old row).
  async function age(operationId: string): Promise<void> {
    await app.db.$executeRaw`
      UPDATE operation SET result_expires_at = now() - interval '1 hour', created_at = now() - interval '30 days'
      WHERE id = ${operationId}`;
  }

  it("deletes only terminal operations past result_expires_at, never live or flagged ones; the key then starts anew and the audit survives", async () => {
    const tool = await createTool({ backoff: { baseMs: 3_600_000, capMs: 3_600_000 } });
    const approvalTool = await createTool({ approval: "required", approvalTtlSeconds: 60 });

    const expiredSucceeded = await claimNew(tool, { n: 1 });
    await complete(expiredSucceeded, { outcome: "succeeded", result: { body: { ok: 1 } } });
    const expiredFailed = await claimNew(tool, { n: 2 });
    await complete(expiredFailed, { outcome: "failed" });
    const rejectedIdem = `idem-${randomUUID()}`;
    const awaiting = await claim(app.baseUrl, acme.agent, rejectedIdem, { tool: approvalTool, args: { n: 3 } });
    await app.db.$executeRaw`UPDATE approval SET expires_at = now() - interval '1 second' WHERE id = ${awaiting.body.approval.id}`;
    expect((await claim(app.baseUrl, acme.agent, rejectedIdem, { tool: approvalTool, args: { n: 3 } })).status).toBe(403);
    const expiredRejected: string = awaiting.body.operationId;
    const prunable = [expiredSucceeded.operationId, expiredFailed.operationId, expiredRejected];

    const freshSucceeded = await claimNew(tool, { n: 4 });
    await complete(freshSucceeded, { outcome: "succeeded" });
    const processing = await claimNew(tool, { n: 5 });
    const pending = await claimNew(tool, { n: 6 });
    await complete(pending, { outcome: "failed", retryable: true });
    const unknown = await claimNew(tool, { n: 7 });
    await complete(unknown, { outcome: "unknown" });
    const stillAwaiting = await claim(app.baseUrl, acme.agent, `idem-${randomUUID()}`, { tool: approvalTool, args: { n: 8 } });
    // Settled (by a webhook, say) while its attempt still works under a live lease it keeps by
    // heartbeats: the attempt's agreeing complete may still come, and a retry of the key must not
    // start a new operation while the first call may be in flight. (The open attempt is set
    // directly: webhooks-matching.test.ts makes one for real.)
    const settledStillOpen = await claimNew(tool, { n: 9 });
    await complete(settledStillOpen, { outcome: "succeeded" });
    await app.db.$executeRaw`UPDATE operation SET open_attempt_until = now() + interval '1 hour' WHERE id = ${settledStillOpen.operationId}`;
    // Succeeded, but flagged: attempt 1 reported success after its retryable failure had let
    // attempt 2 start, so the tool may have acted twice. The flag waits for an operator.
    const retryTool = await createTool({ takeover: "never", maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const flagged = await claimNew(retryTool, { n: 10 });
    expect((await complete(flagged, { outcome: "failed", retryable: true })).body.state).toBe("pending");
    await new Promise((r) => setTimeout(r, 20));
    const second = await claim(app.baseUrl, acme.agent, flagged.idem, { tool: retryTool, args: flagged.args });
    expect(second.status, second.text).toBe(201);
    expect((await complete(flagged, { outcome: "succeeded" })).body.code).toBe("lease-lost");
    expect((await complete({ ...flagged, token: second.body.attempt.fencingToken }, { outcome: "succeeded" })).status).toBe(200);
    expect((await operation(flagged.operationId)).flaggedAt).not.toBeNull();
    const live = [processing.operationId, pending.operationId, unknown.operationId, stillAwaiting.body.operationId, settledStillOpen.operationId, flagged.operationId];

    for (const id of [...prunable, ...live]) await age(id);
    const states = await app.db.operation.findMany({ where: { id: { in: [...prunable, ...live] } }, select: { id: true, state: true } });
    expect(Object.fromEntries(states.map((s) => [s.id, s.state]))).toEqual({
      [expiredSucceeded.operationId]: "succeeded",
      [expiredFailed.operationId]: "failed",
      [expiredRejected]: "rejected",
      [processing.operationId]: "processing",
      [pending.operationId]: "pending",
      [unknown.operationId]: "unknown",
      [stillAwaiting.body.operationId]: "awaiting_approval",
      [settledStillOpen.operationId]: "succeeded",
      [flagged.operationId]: "succeeded",
    });
    const auditBefore = await app.db.auditEvent.count({ where: { targetType: "operation", targetId: { in: prunable } } });
    expect(auditBefore).toBeGreaterThanOrEqual(6);

    const { stdout } = await runPrune();

    expect(stdout).toContain("Pruned 3 terminal operation(s)");
    expect(await app.db.operation.count({ where: { id: { in: prunable } } })).toBe(0);
    expect(await app.db.attempt.count({ where: { operationId: { in: prunable } } })).toBe(0);
    expect(await app.db.operation.count({ where: { id: { in: [...live, freshSucceeded.operationId] } } })).toBe(live.length + 1);
    // The audit log outlives what it describes.
    expect(await app.db.auditEvent.count({ where: { targetType: "operation", targetId: { in: prunable } } })).toBe(auditBefore);

    const again = await claim(app.baseUrl, acme.agent, expiredSucceeded.idem, { tool, args: expiredSucceeded.args });
    expect(again.status, again.text).toBe(201);
    expect(again.body.operationId).not.toBe(expiredSucceeded.operationId);
    expect(again.body.attempt.number).toBe(1);
    // A fresh result is still replayed, and live operations keep their protocol answers.
    expect((await claim(app.baseUrl, acme.agent, freshSucceeded.idem, { tool, args: freshSucceeded.args })).status).toBe(200);
    expect((await claim(app.baseUrl, acme.agent, unknown.idem, { tool, args: unknown.args })).body.code).toBe("outcome-unknown");
  });
});
