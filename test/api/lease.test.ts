import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, claim, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { waitUntilLeaseExpired } from "../support/wait-for-lease";

// The lease-expiry scenario of the issue: worker A claims and stalls past its lease. With
// takeover "deduplicated" worker B takes over and A's late report is fenced off; with
// takeover "never" nobody may run it again and the outcome becomes unknown. The lease is
// 1 s and the tests poll the database clock until it is surely over, never a fixed sleep.

let app: TestApp;
let acme: TenantKeys;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
});
afterAll(async () => {
  await app?.stop();
});

let toolCounter = 0;

async function createTool(policy: Record<string, unknown>): Promise<string> {
  const name = `lease.tool-${++toolCounter}`;
  const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: acme.admin, body: { policy } });
  expect(res.status, res.text).toBe(201);
  return name;
}

function complete(operationId: string, body: Record<string, unknown>): Promise<Reply> {
  return call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, { key: acme.agent, body });
}

const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });
const attemptsOf = (operationId: string) => app.db.attempt.findMany({ where: { operationId }, orderBy: { number: "asc" } });


function expectProblem(res: Reply, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ status, code });
}

const args = { customer: "cus_1", amount: 4200 };

describe("lease expiry with takeover deduplicated", () => {
  it("B takes over A's expired lease; A's late complete is refused (lease-lost); B's result is the one stored and replayed", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "deduplicated", maxAttempts: 3 });
    const idem = `idem-${randomUUID()}`;
    const a = await claim(app.baseUrl, acme.agent, idem, { tool, args });
    expect(a.status, a.text).toBe(201);
    const operationId: string = a.body.operationId;
    // A stalls past its lease.
    await waitUntilLeaseExpired(app.db, operationId);

    // The same agent principal retries the same intent (same key, same args): worker B.
    const b = await claim(app.baseUrl, acme.agent, idem, { tool, args });
    expect(b.status, b.text).toBe(201);
    expect(b.body).toMatchObject({ operationId, state: "processing", attempt: { number: 2 } });
    expect(BigInt(b.body.attempt.fencingToken)).toBeGreaterThan(BigInt(a.body.attempt.fencingToken));
    // The provider sees the same downstream key, so it dedupes A's effect if A did get through.
    expect(b.body.downstreamKey).toBe(a.body.downstreamKey);

    const heartbeatA = await call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/heartbeat`, {
      key: acme.agent,
      body: { fencingToken: a.body.attempt.fencingToken },
    });
    const lateA = await complete(operationId, {
      fencingToken: a.body.attempt.fencingToken,
      outcome: "succeeded",
      result: { statusCode: 201, body: { charge: "ch_from_A" }, resourceId: "ch_from_A" },
    });
    expectProblem(heartbeatA, 409, "lease-lost");
    expectProblem(lateA, 409, "lease-lost");
    expect(await operation(operationId)).toMatchObject({ state: "processing", result: null, fencingToken: BigInt(b.body.attempt.fencingToken) });

    const doneB = await complete(operationId, {
      fencingToken: b.body.attempt.fencingToken,
      outcome: "succeeded",
      result: { statusCode: 201, body: { charge: "ch_from_B" }, resourceId: "ch_from_B" },
    });
    expect(doneB.status, doneB.text).toBe(200);
    expect(doneB.body).toMatchObject({ state: "succeeded", attempts: 2 });

    const stored = await operation(operationId);
    expect(stored).toMatchObject({
      state: "succeeded",
      result: { statusCode: 201, body: { charge: "ch_from_B" }, resourceId: "ch_from_B" },
      takeoverCount: 1,
    });
    const attempts = await attemptsOf(operationId);
    expect(attempts.map((t) => ({ number: t.number, token: t.fencingToken.toString(), outcome: t.outcome }))).toEqual([
      { number: 1, token: a.body.attempt.fencingToken, outcome: "taken_over" },
      { number: 2, token: b.body.attempt.fencingToken, outcome: "succeeded" },
    ]);
    // A's refused report left no trace on its attempt.
    expect(attempts[0]!.completeDigest).toBeNull();
    const replay = await claim(app.baseUrl, acme.agent, idem, { tool, args });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.result).toEqual({ statusCode: 201, body: { charge: "ch_from_B" }, resourceId: "ch_from_B" });
  });
});

describe("lease expiry with takeover never", () => {
  it("the claim after expiry gets 409 outcome-unknown and the operation becomes unknown; later claims and A's late complete are refused", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never", maxAttempts: 3 });
    const idem = `idem-${randomUUID()}`;
    const a = await claim(app.baseUrl, acme.agent, idem, { tool, args });
    expect(a.status, a.text).toBe(201);
    const operationId: string = a.body.operationId;
    await waitUntilLeaseExpired(app.db, operationId);

    const retry = await claim(app.baseUrl, acme.agent, idem, { tool, args });

    expectProblem(retry, 409, "outcome-unknown");
    expect(await operation(operationId)).toMatchObject({ state: "unknown", attemptCount: 1, leaseExpiresAt: null });
    expect((await attemptsOf(operationId)).map((t) => [t.number, t.outcome])).toEqual([[1, "lease_lost"]]);

    const later = [await claim(app.baseUrl, acme.agent, idem, { tool, args }), await claim(app.baseUrl, acme.agent, idem, { tool, args })];
    for (const res of later) expectProblem(res, 409, "outcome-unknown");

    // A wakes up and reports: too late, the operation already needs reconciliation.
    const lateA = await complete(operationId, {
      fencingToken: a.body.attempt.fencingToken,
      outcome: "succeeded",
      result: { statusCode: 201, body: { charge: "ch_from_A" } },
    });
    expectProblem(lateA, 409, "lease-lost");
    const stored = await operation(operationId);
    expect(stored).toMatchObject({ state: "unknown", result: null, attemptCount: 1 });
    expect((await attemptsOf(operationId)).map((t) => [t.number, t.outcome, t.completeDigest])).toEqual([[1, "lease_lost", null]]);
    // What A said is kept for the operator who settles the unknown outcome.
    const kept = await app.db.auditEvent.findMany({ where: { targetId: operationId, action: "operation.late_report_refused" } });
    expect(kept).toMatchObject([
      {
        after: { reportingAttempt: 1, newestAttempt: 1, reportedOutcome: "succeeded", result: { body: { charge: "ch_from_A" } } },
        reason: "attempt 1 reported succeeded after its lease expired and the operation became unknown; refused (lease-lost)",
      },
    ]);
  });

  it("a late complete by A before anyone else claimed is still accepted: nobody took over, and it is the truth", async () => {
    const tool = await createTool({ leaseSeconds: 1, takeover: "never" });
    const idem = `idem-${randomUUID()}`;
    const a = await claim(app.baseUrl, acme.agent, idem, { tool, args });
    await waitUntilLeaseExpired(app.db, a.body.operationId);

    const lateA = await complete(a.body.operationId, {
      fencingToken: a.body.attempt.fencingToken,
      outcome: "succeeded",
      result: { statusCode: 201, body: { charge: "ch_late" } },
    });

    expect(lateA.status, lateA.text).toBe(200);
    expect(await operation(a.body.operationId)).toMatchObject({ state: "succeeded", result: { body: { charge: "ch_late" } } });
    const replay = await claim(app.baseUrl, acme.agent, idem, { tool, args });
    expect(replay.status).toBe(200);
  });
});
