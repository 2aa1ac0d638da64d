import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { sha256Hex } from "@/lib/crypto/digest";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { downstreamKey } from "@/lib/operations/downstream-key";
import { call, claim, type Reply } from "../support/http";
import { createTool as createToolIn, expectProblem, type Policy } from "../support/protocol";
import { seedTenant, startTestApp, TEST_SECRET, type TenantKeys, type TestApp } from "../support/test-app";
import { waitUntilLeaseExpired } from "../support/wait-for-lease";

// One test per row of the claim table in AGENT-API.md ("Claim"), each asserting the answer
// (status, code, headers) AND what the database holds afterwards, plus the scope rules
// (tenant, principal, tool, key) that decide which operation a claim lands on.

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

// A fresh tool per test, so one test's policy never leaks into another's.
const createTool = (policy: Policy = {}, tenants: TenantKeys[] = [acme], name?: string) => createToolIn(app.baseUrl, tenants, { policy }, name);

const newKey = () => `idem-${randomUUID()}`;

function complete(operationId: string, key: string, body: Record<string, unknown>): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, { key, body });
}

const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });
// An id's first 48 bits are its row's creation time in milliseconds (clocks of the server and of
// PostgreSQL; a claim may use an id made for an earlier claim that created nothing), then 22
// URL-safe characters in all. Random bits in those 48 would read as any time in 8,900 years.
function expectIdOfItsTime(id: string, prefix: string, createdAt: Date): void {
  expect(id).toMatch(new RegExp(`^${prefix}_[A-Za-z0-9_-]{22}$`));
  const millis = Buffer.from(id.slice(prefix.length + 1), "base64url").readUIntBE(0, 6);
  expect(Math.abs(millis - createdAt.getTime())).toBeLessThan(60_000);
}
const attemptsOf = (operationId: string) => app.db.attempt.findMany({ where: { operationId }, orderBy: { number: "asc" } });
const auditOf = (operationId: string) =>
  app.db.auditEvent.findMany({ where: { targetType: "operation", targetId: operationId }, orderBy: { id: "asc" } });
const keyId = async (tenant: TenantKeys, principal: string) =>
  (await app.db.apiKey.findFirstOrThrow({ where: { tenantId: tenant.tenantId, principal } })).id;

function expectRetryAfter(res: Reply, atMost?: number): number {
  const value = res.headers.get("retry-after");
  expect(value, "Retry-After header").toMatch(/^\d+$/);
  const seconds = Number(value);
  expect(seconds).toBeGreaterThanOrEqual(1);
  if (atMost !== undefined) expect(seconds).toBeLessThanOrEqual(atMost);
  return seconds;
}

async function tenantCounts(tenant: TenantKeys) {
  return {
    operations: await app.db.operation.count({ where: { tenantId: tenant.tenantId } }),
    attempts: await app.db.attempt.count({ where: { tenantId: tenant.tenantId } }),
    approvals: await app.db.approval.count({ where: { tenantId: tenant.tenantId } }),
    audit: await app.db.auditEvent.count({ where: { tenantId: tenant.tenantId } }),
  };
}

describe("claim: one test per row of the contract's table", () => {
  it("new key, tool needs no approval → 201 processing with attempt 1, a lease, a Location, and the attempt and audit stored", async () => {
    const tool = await createTool({ leaseSeconds: 30 });
    const idem = newKey();

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: { title: "Printer on fire" }, workflowId: "wf_1" });

    expect(res.status, res.text).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(Object.keys(res.body).sort()).toEqual(["attempt", "downstreamKey", "operationId", "resultExpiresAt", "state", "tool"]);
    expect(res.body).toMatchObject({ state: "processing", tool, resultExpiresAt: null, attempt: { number: 1 } });
    expect(Object.keys(res.body.attempt).sort()).toEqual(["fencingToken", "leaseExpiresAt", "number"]);
    expect(res.body.attempt.fencingToken).toMatch(/^[1-9][0-9]*$/);
    expect(new Date(res.body.attempt.leaseExpiresAt).toISOString()).toBe(res.body.attempt.leaseExpiresAt);
    expect(typeof res.body.downstreamKey).toBe("string");
    expect(res.body.downstreamKey).not.toContain(idem);
    const operationId: string = res.body.operationId;
    expect(res.headers.get("location")).toBe(`/api/v1/operations/${operationId}`);

    const op = await operation(operationId);
    expect(op).toMatchObject({ tenantId: acme.tenantId, principal: "acme-agent", tool, state: "processing", attemptCount: 1, maxAttempts: 3 });
    expect(op.fencingToken).toBe(BigInt(res.body.attempt.fencingToken));
    expect(op.leaseExpiresAt?.toISOString()).toBe(res.body.attempt.leaseExpiresAt);
    expect(op.downstreamKey).toBe(res.body.downstreamKey);
    // The lease is the tool's leaseSeconds from the claim (both stamped by the same transaction).
    expect(Math.abs(op.leaseExpiresAt!.getTime() - op.createdAt.getTime() - 30_000)).toBeLessThanOrEqual(1);
    // Only a digest of the key is kept; the raw key appears nowhere in the row.
    expect(op.keyDigest).toBe(sha256Hex(idem));
    expect(JSON.stringify(op, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(idem);
    expect(op.resultExpiresAt).toBeNull();

    const attempts = await attemptsOf(operationId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ number: 1, fencingToken: op.fencingToken, outcome: null, endedAt: null, principal: "acme-agent" });
    expect(attempts[0]!.leaseExpiresAt.toISOString()).toBe(res.body.attempt.leaseExpiresAt);
    // Both ids lead with their creation time (hot index pages; lib/crypto/ids.ts, migration 20261130180002).
    expectIdOfItsTime(operationId, "op", op.createdAt);
    expectIdOfItsTime(attempts[0]!.id, "att", attempts[0]!.startedAt);

    const audit = await auditOf(operationId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      tenantId: acme.tenantId,
      action: "operation.claimed",
      actor: `api-key:${await keyId(acme, "acme-agent")}`,
      after: { state: "processing", attempt: 1, fencingToken: res.body.attempt.fencingToken },
    });
  });

  it("new key, tool needs approval → 202 awaiting_approval with approval id, expiry and Retry-After; an approval bound to the fingerprint is stored", async () => {
    const tool = await createTool({ approval: "required", approvalTtlSeconds: 3600 });

    const res = await claim(app.baseUrl, acme.agent, newKey(), { tool, args: { amount: 5000 } });

    expect(res.status, res.text).toBe(202);
    expectRetryAfter(res);
    expect(res.body).toMatchObject({ state: "awaiting_approval", tool, approval: { id: expect.any(String), expiresAt: expect.any(String) } });
    expect(res.body.attempt).toBeUndefined();
    const op = await operation(res.body.operationId);
    expect(op).toMatchObject({ state: "awaiting_approval", attemptCount: 0, fencingToken: null, leaseExpiresAt: null });
    expect(await attemptsOf(op.id)).toHaveLength(0);
    const approvals = await app.db.approval.findMany({ where: { operationId: op.id } });
    expect(approvals).toHaveLength(1);
    const approval = approvals[0]!;
    expect(approval).toMatchObject({ id: res.body.approval.id, state: "pending", fingerprint: op.fingerprint, requestedBy: "acme-agent" });
    expect(approval.expiresAt.toISOString()).toBe(res.body.approval.expiresAt);
    // The approval expires approvalTtlSeconds after it was requested.
    expect(Math.abs(approval.expiresAt.getTime() - approval.createdAt.getTime() - 3_600_000)).toBeLessThanOrEqual(1_000);
    const audit = await auditOf(op.id);
    expect(audit.map((e) => e.action)).toEqual(["operation.claimed"]);
    expect(audit[0]!.after).toMatchObject({ state: "awaiting_approval", approvalId: approval.id });
  });

  it("same key and args while awaiting approval → the same 202 with the same approval, and nothing new stored", async () => {
    const tool = await createTool({ approval: "required" });
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { amount: 5000 } });
    expect(first.status).toBe(202);

    const again = await claim(app.baseUrl, acme.agent, idem, { tool, args: { amount: 5000 } });

    expect(again.status, again.text).toBe(202);
    expectRetryAfter(again);
    expect(again.body).toEqual(first.body);
    expect(await app.db.operation.count({ where: { tool } })).toBe(1);
    expect(await app.db.approval.count({ where: { operationId: first.body.operationId } })).toBe(1);
    expect(await attemptsOf(first.body.operationId)).toHaveLength(0);
    expect((await operation(first.body.operationId)).state).toBe("awaiting_approval");
  });

  it("pending while the backoff is not over → 429 retry-backoff with Retry-After, and no new attempt", async () => {
    const tool = await createTool({ maxAttempts: 3, backoff: { baseMs: 3_600_000, capMs: 3_600_000 } });
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 1 } });
    const failed = await complete(first.body.operationId, acme.agent, {
      fencingToken: first.body.attempt.fencingToken,
      outcome: "failed",
      retryable: true,
      error: { code: "upstream_503", message: "try later" },
    });
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body.state).toBe("pending");
    // Full jitter draws uniformly in [0, 1 h): a draw of under a minute is rare but possible, and
    // this row is about a backoff that is not over, so make sure it is not about to end.
    await app.db.$executeRaw`
      UPDATE operation SET not_before = now() + interval '1 hour'
      WHERE id = ${first.body.operationId} AND not_before < now() + interval '1 minute'`;
    const before = await operation(first.body.operationId);

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 1 } });

    expectProblem(res, 429, "retry-backoff");
    const seconds = expectRetryAfter(res, 3600);
    // Retry-After tells the agent when the backoff ends (whole seconds, rounded up).
    const remaining = (before.notBefore!.getTime() - Date.now()) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(Math.floor(remaining) - 5);
    expect(res.body.notBefore).toBe(before.notBefore!.toISOString());
    const after = await operation(first.body.operationId);
    expect(after).toMatchObject({ state: "pending", attemptCount: 1, fencingToken: before.fencingToken, notBefore: before.notBefore });
    const attempts = await attemptsOf(after.id);
    expect(attempts.map((a) => [a.number, a.outcome])).toEqual([[1, "retryable_failure"]]);
  });

  it("pending with the backoff over and attempts left → 201 with attempt 2, a larger fencing token and the same downstreamKey", async () => {
    const tool = await createTool({ maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 2 } });
    const failed = await complete(first.body.operationId, acme.agent, {
      fencingToken: first.body.attempt.fencingToken,
      outcome: "failed",
      retryable: true,
    });
    expect(failed.body.state).toBe("pending");
    await new Promise((r) => setTimeout(r, 20));

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 2 } });

    expect(res.status, res.text).toBe(201);
    expect(res.headers.get("location")).toBe(`/api/v1/operations/${first.body.operationId}`);
    expect(res.body).toMatchObject({ operationId: first.body.operationId, state: "processing", attempt: { number: 2 } });
    expect(BigInt(res.body.attempt.fencingToken)).toBeGreaterThan(BigInt(first.body.attempt.fencingToken));
    expect(res.body.downstreamKey).toBe(first.body.downstreamKey);
    const op = await operation(first.body.operationId);
    expect(op).toMatchObject({ state: "processing", attemptCount: 2, fencingToken: BigInt(res.body.attempt.fencingToken), notBefore: null });
    const attempts = await attemptsOf(op.id);
    expect(attempts.map((a) => ({ number: a.number, token: a.fencingToken.toString(), outcome: a.outcome }))).toEqual([
      { number: 1, token: first.body.attempt.fencingToken, outcome: "retryable_failure" },
      { number: 2, token: res.body.attempt.fencingToken, outcome: null },
    ]);
    expectIdOfItsTime(attempts[1]!.id, "att", attempts[1]!.startedAt);
    const audit = await auditOf(op.id);
    expect(audit.map((e) => e.action)).toEqual(["operation.claimed", "operation.retry_scheduled", "operation.attempt_started"]);
    expect(audit[2]).toMatchObject({ before: { state: "pending" }, after: { state: "processing", attempt: 2, fencingToken: res.body.attempt.fencingToken } });
  });

  it("processing with a live lease → 409 operation-in-progress with Retry-After, and the holder keeps its lease", async () => {
    const tool = await createTool({ leaseSeconds: 30 });
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 3 } });
    const before = await operation(first.body.operationId);

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 3 } });

    expectProblem(res, 409, "operation-in-progress");
    expectRetryAfter(res, 30);
    expect(res.body.operationId).toBe(first.body.operationId);
    // A second claimant must not learn the holder's fencing token.
    expect(res.text).not.toContain(`"${first.body.attempt.fencingToken}"`);
    const after = await operation(first.body.operationId);
    expect(after).toMatchObject({ state: "processing", attemptCount: 1, fencingToken: before.fencingToken, leaseExpiresAt: before.leaseExpiresAt });
    expect((await attemptsOf(after.id)).map((a) => [a.number, a.outcome])).toEqual([[1, null]]);
  });

  it("processing with an expired lease, takeover deduplicated and attempts left → 201 takeover: larger token, same downstreamKey, old attempt taken_over", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "deduplicated", maxAttempts: 3 });
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 4 } });
    await waitUntilLeaseExpired(app.db, first.body.operationId);

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 4 } });

    expect(res.status, res.text).toBe(201);
    expect(res.headers.get("location")).toBe(`/api/v1/operations/${first.body.operationId}`);
    expect(res.body).toMatchObject({ operationId: first.body.operationId, state: "processing", attempt: { number: 2 } });
    expect(BigInt(res.body.attempt.fencingToken)).toBeGreaterThan(BigInt(first.body.attempt.fencingToken));
    expect(res.body.downstreamKey).toBe(first.body.downstreamKey);
    const op = await operation(first.body.operationId);
    expect(op).toMatchObject({ state: "processing", attemptCount: 2, fencingToken: BigInt(res.body.attempt.fencingToken), takeoverCount: 1 });
    const attempts = await attemptsOf(op.id);
    expect(attempts.map((a) => ({ number: a.number, token: a.fencingToken.toString(), outcome: a.outcome }))).toEqual([
      { number: 1, token: first.body.attempt.fencingToken, outcome: "taken_over" },
      { number: 2, token: res.body.attempt.fencingToken, outcome: null },
    ]);
    expect(attempts[0]!.endedAt).not.toBeNull();
    expect((await auditOf(op.id)).map((e) => e.action)).toEqual(["operation.claimed", "operation.taken_over"]);
  });

  it.each([
    { why: "takeover never", policy: { leaseSeconds: 1, takeover: "never", maxAttempts: 3 } as Policy },
    { why: "takeover deduplicated but no attempts left", policy: { leaseSeconds: 1, takeover: "deduplicated", maxAttempts: 1 } as Policy },
  ])("processing with an expired lease otherwise ($why) → 409 outcome-unknown; the operation becomes unknown and the attempt lease_lost", async ({ policy }) => {
    const tool = await createTool(policy);
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 5 } });
    await waitUntilLeaseExpired(app.db, first.body.operationId);

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 5 } });

    expectProblem(res, 409, "outcome-unknown");
    expect(res.body.operationId).toBe(first.body.operationId);
    const op = await operation(first.body.operationId);
    expect(op).toMatchObject({ state: "unknown", attemptCount: 1, leaseExpiresAt: null, result: null });
    const attempts = await attemptsOf(op.id);
    expect(attempts.map((a) => [a.number, a.outcome])).toEqual([[1, "lease_lost"]]);
    expect(attempts[0]!.endedAt).not.toBeNull();
    const audit = await auditOf(op.id);
    expect(audit.map((e) => e.action)).toEqual(["operation.claimed", "operation.unknown"]);
    expect(audit[1]).toMatchObject({ before: { state: "processing" }, after: { state: "unknown" } });
  });

  it("unknown → 409 outcome-unknown on every claim, and nothing is started", async () => {
    const tool = await createTool();
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 6 } });
    const reported = await complete(first.body.operationId, acme.agent, { fencingToken: first.body.attempt.fencingToken, outcome: "unknown" });
    expect(reported.body.state).toBe("unknown");

    const answers = [
      await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 6 } }),
      await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 6 } }),
    ];

    for (const res of answers) {
      expectProblem(res, 409, "outcome-unknown");
      expect(res.body.operationId).toBe(first.body.operationId);
    }
    const op = await operation(first.body.operationId);
    expect(op).toMatchObject({ state: "unknown", attemptCount: 1 });
    expect((await attemptsOf(op.id)).map((a) => [a.number, a.outcome])).toEqual([[1, "unknown"]]);
  });

  it.each([
    {
      outcome: "succeeded",
      report: { outcome: "succeeded", result: { statusCode: 201, body: { ticket: "T-9" }, resourceId: "T-9" } },
      expected: { result: { statusCode: 201, body: { ticket: "T-9" }, resourceId: "T-9" }, error: null },
    },
    {
      outcome: "failed",
      report: { outcome: "failed", result: { statusCode: 402, body: { declined: true } }, error: { code: "card_declined", message: "Declined" } },
      expected: { result: { statusCode: 402, body: { declined: true }, resourceId: null }, error: { code: "card_declined", message: "Declined" } },
    },
  ])("$outcome → 200 stored result with Idempotent-Replayed, byte-for-byte the same on every replay", async ({ outcome, report, expected }) => {
    const tool = await createTool();
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 7 } });
    const done = await complete(first.body.operationId, acme.agent, { fencingToken: first.body.attempt.fencingToken, ...report });
    expect(done.status, done.text).toBe(200);

    const replays: Reply[] = [];
    for (let i = 0; i < 3; i++) replays.push(await claim(app.baseUrl, acme.agent, idem, { tool, args: { n: 7 } }));

    const stored = await operation(first.body.operationId);
    for (const res of replays) {
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get("idempotent-replayed")).toBe("true");
      // The test client accepts gzip; a replay is small and must reach it as the stored bytes.
      expect(res.headers.get("content-encoding")).toBeNull();
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.text).toBe(replays[0]!.text);
    }
    expect(Object.keys(replays[0]!.body)).toEqual(["operationId", "state", "tool", "result", "error", "resultExpiresAt"]);
    expect(replays[0]!.body).toEqual({
      operationId: first.body.operationId,
      state: outcome,
      tool,
      ...expected,
      resultExpiresAt: stored.resultExpiresAt!.toISOString(),
    });
    // A replay starts nothing: still the one attempt; the replays are only counted.
    expect(stored).toMatchObject({ state: outcome, attemptCount: 1, replayCount: 3 });
    expect(await attemptsOf(stored.id)).toHaveLength(1);
  });

  it("rejected (the approval expired) → 403 approval-rejected on every claim, and nothing runs", async () => {
    const tool = await createTool({ approval: "required", approvalTtlSeconds: 60 });
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: { amount: 10 } });
    expect(first.status).toBe(202);
    // Time passes: the approval's TTL runs out without a decision.
    await app.db.$executeRaw`UPDATE approval SET expires_at = now() - interval '1 second' WHERE id = ${first.body.approval.id}`;

    const answers = [
      await claim(app.baseUrl, acme.agent, idem, { tool, args: { amount: 10 } }),
      await claim(app.baseUrl, acme.agent, idem, { tool, args: { amount: 10 } }),
      await claim(app.baseUrl, acme.agent, idem, { tool, args: { amount: 10 } }),
    ];

    for (const res of answers) {
      expectProblem(res, 403, "approval-rejected");
      expect(res.body.operationId).toBe(first.body.operationId);
    }
    const op = await operation(first.body.operationId);
    expect(op).toMatchObject({ state: "rejected", attemptCount: 0, fencingToken: null });
    expect(op.resultExpiresAt).not.toBeNull();
    expect(await attemptsOf(op.id)).toHaveLength(0);
    const approval = await app.db.approval.findUniqueOrThrow({ where: { id: first.body.approval.id } });
    expect(approval.state).toBe("expired");
    expect((await auditOf(op.id)).map((e) => e.action)).toEqual(["operation.claimed", "approval.expired"]);
  });

  const leafValues = (value: unknown): string[] =>
    value !== null && typeof value === "object" ? Object.values(value).flatMap(leafValues) : [String(value)];

  it.each([
    {
      name: "a changed number",
      stored: { amount: 98765, currency: "cur-stored-q1" },
      sent: { amount: 43210, currency: "cur-stored-q1" },
      mismatch: ["args.amount"],
    },
    {
      name: "a changed field inside an array",
      stored: { items: [{ sku: "sku-stored-aaa" }, { sku: "sku-stored-bbb" }, { sku: "sku-stored-ccc" }] },
      sent: { items: [{ sku: "sku-stored-aaa" }, { sku: "sku-stored-bbb" }, { sku: "sku-new-zzz" }] },
      mismatch: ["args.items[2].sku"],
    },
    {
      name: "an added field",
      stored: { title: "title-stored-x" },
      sent: { title: "title-stored-x", priority: "priority-new-y" },
      mismatch: ["args.priority"],
    },
  ])("same key with different args ($name) → 422 idempotency-key-reused naming paths, never values", async ({ stored, sent, mismatch }) => {
    const tool = await createTool();
    const idem = newKey();
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: stored });
    const before = await operation(first.body.operationId);

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: sent });

    expectProblem(res, 422, "idempotency-key-reused");
    expect(res.body.mismatch).toEqual(mismatch);
    for (const value of [...leafValues(stored), ...leafValues(sent)]) expect(res.text).not.toContain(value);
    const after = await operation(first.body.operationId);
    expect(after).toMatchObject({ state: "processing", attemptCount: 1, fingerprint: before.fingerprint, args: before.args, mismatchCount: 1 });
    expect(await attemptsOf(after.id)).toHaveLength(1);
    expect(await app.db.operation.count({ where: { tool } })).toBe(1);
    // Where they differed is kept for the operator's trace: paths, never a value.
    expect(after.lastMismatch).toMatchObject({ paths: mismatch });
    for (const value of leafValues(sent)) expect(JSON.stringify(after.lastMismatch)).not.toContain(value);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: after.id });
    const conflicts = trace?.timeline.find((e) => e.kind === "conflicts");
    expect(conflicts?.fields).toContainEqual(expect.objectContaining({ label: "Where the last 422's arguments differed", value: mismatch.join(", ") }));
  });

  it.each([
    { differing: 50, listed: 50, more: false },
    { differing: 51, listed: 50, more: true },
    { differing: 80, listed: 50, more: true },
  ])("$differing differing paths → the 422 lists $listed; the trace says whether more differ ($more)", async ({ differing, listed, more }) => {
    const tool = await createTool();
    const idem = newKey();
    const stored = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`f${String(i).padStart(2, "0")}`, i]));
    const sent = Object.fromEntries(Object.entries(stored).map(([k, v], i) => [k, i < differing ? v + 1000 : v]));
    const first = await claim(app.baseUrl, acme.agent, idem, { tool, args: stored });

    const res = await claim(app.baseUrl, acme.agent, idem, { tool, args: sent });

    expectProblem(res, 422, "idempotency-key-reused");
    const expected = Object.keys(stored).slice(0, listed).map((k) => `args.${k}`);
    expect(res.body.mismatch).toEqual(expected);
    const after = await operation(first.body.operationId);
    expect(after.lastMismatch).toMatchObject({ paths: expected, more });
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: after.id });
    const shown = trace?.timeline.find((e) => e.kind === "conflicts")?.fields.find((f) => f.label === "Where the last 422's arguments differed");
    expect(shown?.value).toBe(more ? `${expected.join(", ")} (the first 50; more differ)` : expected.join(", "));
  });

  it("unknown tool → 404 tool-not-found and nothing stored", async () => {
    const before = await tenantCounts(acme);

    const res = await claim(app.baseUrl, acme.agent, newKey(), { tool: "no.such-tool", args: {} });

    expectProblem(res, 404, "tool-not-found");
    expect(await tenantCounts(acme)).toEqual(before);
  });

  it("a tool the key is not allowed to use → 403 forbidden and nothing stored", async () => {
    const allowed = await createTool();
    const other = await createTool();
    const limited = await createApiKey({ db: app.db, tenantId: acme.tenantId, input: { principal: "acme-limited", role: "agent", tools: [allowed] }, actor: "test" });
    const before = await tenantCounts(acme);

    const res = await claim(app.baseUrl, limited.secret, newKey(), { tool: other, args: {} });

    expectProblem(res, 403, "forbidden");
    expect(await tenantCounts(acme)).toEqual(before);
    // The same key may use the tool it was limited to.
    expect((await claim(app.baseUrl, limited.secret, newKey(), { tool: allowed, args: {} })).status).toBe(201);
  });

  it("a key limited to some tools reads and changes only their operations: the others are 404, by id, by key and on every change", async () => {
    const allowed = await createTool();
    const other = await createTool();
    // Same principal as acme.agent, so the lookup by key would otherwise find acme.agent's operation.
    const limited = await createApiKey({ db: app.db, tenantId: acme.tenantId, input: { principal: "acme-agent", role: "agent", tools: [allowed] }, actor: "test" });
    const key = newKey();
    const mine = await claim(app.baseUrl, acme.agent, key, { tool: allowed, args: {} });
    const theirs = await claim(app.baseUrl, acme.agent, key, { tool: other, args: {} });
    expect([mine.status, theirs.status]).toEqual([201, 201]);

    const byId = (id: string) => call(app.baseUrl, "GET", `/api/v1/operations/${id}`, { key: limited.secret });
    const byKey = (tool: string) => call(app.baseUrl, "GET", `/api/v1/operations?tool=${tool}&idempotencyKey=${encodeURIComponent(key)}`, { key: limited.secret });
    expect((await byId(mine.body.operationId)).status).toBe(200);
    expect((await byKey(allowed)).status).toBe(200);
    expectProblem(await byId(theirs.body.operationId), 404, "operation-not-found");
    expectProblem(await byKey(other), 404, "operation-not-found");
    // Nor may it change one, and its answer must not tell that the operation exists (a 403 did).
    const token = theirs.body.attempt.fencingToken;
    const before = { op: await operation(theirs.body.operationId), audit: await auditOf(theirs.body.operationId) };
    const path = `/api/v1/operations/${theirs.body.operationId}`;
    expectProblem(await call(app.baseUrl, "POST", `${path}/heartbeat`, { key: limited.secret, body: { fencingToken: token } }), 404, "operation-not-found");
    expectProblem(await complete(theirs.body.operationId, limited.secret, { fencingToken: token, outcome: "succeeded" }), 404, "operation-not-found");
    const effect = { fencingToken: token, provider: "stripe", state: "intended" };
    expectProblem(await call(app.baseUrl, "PUT", `${path}/side-effects/charge`, { key: limited.secret, body: effect }), 404, "operation-not-found");
    expect({ op: await operation(theirs.body.operationId), audit: await auditOf(theirs.body.operationId) }).toEqual(before);
    expect(await app.db.sideEffect.count({ where: { operationId: theirs.body.operationId } })).toBe(0);
    // The unlimited key of the same principal still sees both.
    expect((await call(app.baseUrl, "GET", `/api/v1/operations/${theirs.body.operationId}`, { key: acme.agent })).status).toBe(200);
  });

  it.each([
    { name: "no key", headers: {} as Record<string, string> },
    { name: "an unknown key", headers: { authorization: "Bearer tg_not-a-real-key-0000000000000000" } },
  ])("$name → 401 unauthorized with WWW-Authenticate: Bearer, and nothing stored", async ({ headers }) => {
    const tool = await createTool();
    const before = await tenantCounts(acme);

    const res = await call(app.baseUrl, "POST", "/api/v1/operations", { headers, idempotencyKey: newKey(), body: { tool, args: {} } });

    expectProblem(res, 401, "unauthorized");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expect(await tenantCounts(acme)).toEqual(before);
  });
});

describe("claim: the idempotency scope is (tenant, principal, tool, key)", () => {
  it("two different keys with identical args are two operations", async () => {
    const tool = await createTool();

    const a = await claim(app.baseUrl, acme.agent, newKey(), { tool, args: { title: "same" } });
    const b = await claim(app.baseUrl, acme.agent, newKey(), { tool, args: { title: "same" } });

    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.operationId).not.toBe(b.body.operationId);
    expect(a.body.downstreamKey).not.toBe(b.body.downstreamKey);
    expect(await app.db.operation.count({ where: { tool } })).toBe(2);
  });

  it("the same key in two tenants gives independent operations", async () => {
    const tool = await createTool({}, [acme, globex]);
    const idem = newKey();

    const a = await claim(app.baseUrl, acme.agent, idem, { tool, args: { title: "same" } });
    const b = await claim(app.baseUrl, globex.agent, idem, { tool, args: { title: "different args are fine too" } });

    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.operationId).not.toBe(b.body.operationId);
    const [opA, opB] = [await operation(a.body.operationId), await operation(b.body.operationId)];
    expect([opA.tenantId, opB.tenantId]).toEqual([acme.tenantId, globex.tenantId]);
    // Finishing one does not settle the other.
    await complete(a.body.operationId, acme.agent, { fencingToken: a.body.attempt.fencingToken, outcome: "succeeded" });
    expect((await claim(app.baseUrl, acme.agent, idem, { tool, args: { title: "same" } })).status).toBe(200);
    expect((await claim(app.baseUrl, globex.agent, idem, { tool, args: { title: "different args are fine too" } })).body.code).toBe(
      "operation-in-progress",
    );
  });

  it("the same key for two tools gives independent operations", async () => {
    const [toolA, toolB] = [await createTool(), await createTool()];
    const idem = newKey();

    const a = await claim(app.baseUrl, acme.agent, idem, { tool: toolA, args: { x: 1 } });
    const b = await claim(app.baseUrl, acme.agent, idem, { tool: toolB, args: { x: 2 } });

    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.operationId).not.toBe(b.body.operationId);
    expect((await operation(a.body.operationId)).tool).toBe(toolA);
    expect((await operation(b.body.operationId)).tool).toBe(toolB);
  });

  it("the same key by two principals of one tenant gives independent operations", async () => {
    const tool = await createTool();
    const idem = newKey();

    const a = await claim(app.baseUrl, acme.agent, idem, { tool, args: { x: 1 } });
    const b = await claim(app.baseUrl, acme.agent2, idem, { tool, args: { x: 2 } });

    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.operationId).not.toBe(b.body.operationId);
    expect((await operation(a.body.operationId)).principal).toBe("acme-agent");
    expect((await operation(b.body.operationId)).principal).toBe("acme-agent-2");
  });
});

// A claim that stores nothing hands its candidate id and downstream key to the process's next
// claim of the tenant (lib/operations/claim-candidate.ts). Whatever answers come in between
// (replays, 409s, an unknown tool, an approval request), every operation must end up with its own
// id, and a downstream key derived from exactly that id.
describe("claim: ids and downstream keys after claims that stored nothing", () => {
  it("every created operation has a fresh id and the downstream key of that id", async () => {
    const tool = await createTool({ leaseSeconds: 60 });
    const gated = await createTool({ approval: "required", approvalTtlSeconds: 3600 });
    const created: Reply[] = [];
    const done = await claim(app.baseUrl, acme.agent, newKey(), { tool, args: { n: 0 } });
    expect(done.status).toBe(201);
    created.push(done);
    const doneKey = newKey();
    const settled = await claim(app.baseUrl, acme.agent, doneKey, { tool, args: { n: 1 } });
    created.push(settled);
    expect((await complete(settled.body.operationId, acme.agent, { fencingToken: settled.body.attempt.fencingToken, outcome: "succeeded" })).status).toBe(200);
    for (let round = 0; round < 3; round++) {
      // Answers that store nothing: a replay, a 409 on a held lease, an unknown tool.
      expect((await claim(app.baseUrl, acme.agent, doneKey, { tool, args: { n: 1 } })).status).toBe(200);
      const heldKey = newKey();
      const held = await claim(app.baseUrl, acme.agent, heldKey, { tool, args: { round } });
      expect(held.status).toBe(201);
      created.push(held);
      const busy = await claim(app.baseUrl, acme.agent, heldKey, { tool, args: { round } });
      expect(busy.status).toBe(409);
      expect(busy.body.operationId).toBe(held.body.operationId);
      expectProblem(await claim(app.baseUrl, acme.agent, newKey(), { tool: "no.such-tool", args: {} }), 404, "tool-not-found");
      // Answers that do store one: an approval request, a new claim.
      const waiting = await claim(app.baseUrl, acme.agent, newKey(), { tool: gated, args: { round } });
      expect(waiting.status).toBe(202);
      created.push(waiting);
    }
    const ids = created.map((r) => r.body.operationId as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(created.map((r) => r.body.downstreamKey)).size).toBe(ids.length);
    for (const reply of created) {
      expect((await operation(reply.body.operationId)).downstreamKey).toBe(reply.body.downstreamKey);
      expect(reply.body.downstreamKey).toBe(downstreamKey({ secret: TEST_SECRET, tenantId: acme.tenantId, operationId: reply.body.operationId }));
    }
  });
});

describe("claim: the operation's counters stop at int4's largest value", () => {
  // An agent looping on one key (a replay, a 409) for weeks reached 2^31 and every later claim
  // under the key failed with numeric overflow: a 500, and the stored result never replayed again.
  const MAX = 2147483647;

  it("a replay, a 409 and a heartbeat on counters already at the top answer as ever and leave them there", async () => {
    const tool = await createTool({ leaseSeconds: 60 });
    const done = newKey();
    const first = await claim(app.baseUrl, acme.agent, done, { tool, args: { n: 1 } });
    expect(first.status).toBe(201);
    expect((await complete(first.body.operationId, acme.agent, { fencingToken: first.body.attempt.fencingToken, outcome: "succeeded", result: { statusCode: 200, body: { ok: true } } })).status).toBe(200);
    await app.db.operation.update({ where: { id: first.body.operationId }, data: { replayCount: MAX, conflictCount: MAX, mismatchCount: MAX } });
    const replay = await claim(app.baseUrl, acme.agent, done, { tool, args: { n: 1 } });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expectProblem(await claim(app.baseUrl, acme.agent, done, { tool, args: { n: 2 } }), 422, "idempotency-key-reused");
    expect(await operation(first.body.operationId)).toMatchObject({ replayCount: MAX, conflictCount: MAX, mismatchCount: MAX });

    const running = newKey();
    const live = await claim(app.baseUrl, acme.agent, running, { tool, args: { n: 3 } });
    expect(live.status).toBe(201);
    await app.db.operation.update({ where: { id: live.body.operationId }, data: { conflictCount: MAX, heartbeatCount: MAX } });
    expectProblem(await claim(app.baseUrl, acme.agent, running, { tool, args: { n: 3 } }), 409, "operation-in-progress");
    const beat = await call(app.baseUrl, "POST", `/api/v1/operations/${live.body.operationId}/heartbeat`, { key: acme.agent, body: { fencingToken: live.body.attempt.fencingToken } });
    expect(beat.status, beat.text).toBe(200);
    expect(await operation(live.body.operationId)).toMatchObject({ conflictCount: MAX, heartbeatCount: MAX });

    // The claim that finds the lease expired (takeover never) counts a conflict as it makes the operation unknown.
    const never = await createTool({ leaseSeconds: 1, takeover: "never" });
    const lapsing = newKey();
    const lapsed = await claim(app.baseUrl, acme.agent, lapsing, { tool: never, args: { n: 4 } });
    expect(lapsed.status).toBe(201);
    await app.db.operation.update({ where: { id: lapsed.body.operationId }, data: { conflictCount: MAX } });
    await waitUntilLeaseExpired(app.db, lapsed.body.operationId);
    expectProblem(await claim(app.baseUrl, acme.agent, lapsing, { tool: never, args: { n: 4 } }), 409, "outcome-unknown");
    expect(await operation(lapsed.body.operationId)).toMatchObject({ state: "unknown", conflictCount: MAX });
  });
});
