import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callProvider, startFakeProvider, type FakeProvider } from "../support/fake-provider";
import { call, claim, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { waitUntilLeaseExpired } from "../support/wait-for-lease";

// Two `next start` instances on ONE database: the only thing that can serialize claimants is
// the database itself, which is what a horizontally scaled deployment relies on.
let app: TestApp;
let tenant: TenantKeys;
let provider: FakeProvider;
let dedupingProvider: FakeProvider;

const tools = {
  // Default policy: lease 30 s, takeover "never".
  race: "race.tickets-create",
  distinct: "race.tickets-distinct",
  // leaseSeconds 1 so the test can let a lease expire; takeover allowed because the provider dedupes.
  takeover: "race.charges-create",
} as const;

beforeAll(async () => {
  app = await startTestApp({ instances: 2 });
  tenant = await seedTenant(app.db, "race");
  provider = await startFakeProvider();
  dedupingProvider = await startFakeProvider({ dedupe: true });
  for (const name of [tools.race, tools.distinct]) {
    expect((await putTool(name, {})).status).toBe(201);
  }
  expect((await putTool(tools.takeover, { policy: { leaseSeconds: 1, takeover: "deduplicated", maxAttempts: 3 } })).status).toBe(201);
});

afterAll(async () => {
  await provider?.stop();
  await dedupingProvider?.stop();
  await app?.stop();
});

function putTool(name: string, definition: Record<string, unknown>): Promise<Reply> {
  return call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: tenant.admin, body: definition });
}

// Request i goes to instance i % 2, so both processes race on the same row.
function baseUrlFor(i: number): string {
  return app.servers[i % app.servers.length]!.baseUrl;
}

function concurrentClaims(n: number, idemKey: (i: number) => string, body: unknown): Promise<Reply[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => claim(baseUrlFor(i), tenant.agent, idemKey(i), body)));
}

function countBy(replies: Reply[], pick: (r: Reply) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of replies) counts[pick(r)] = (counts[pick(r)] ?? 0) + 1;
  return counts;
}

const statusAndCode = (r: Reply) => `${r.status}${r.body?.code ? ` ${String(r.body.code)}` : ""}`;

// What a real executor does with a claim reply: only a 201 grants the right to act. It calls
// the provider with the downstreamKey, then reports the outcome under its fencing token.
async function actIfGranted(reply: Reply, target: FakeProvider, baseUrl: string): Promise<Reply | null> {
  if (reply.status !== 201) return null;
  const { operationId, downstreamKey, attempt } = reply.body as { operationId: string; downstreamKey: string; attempt: { fencingToken: string } };
  const sent = await callProvider(target, { downstreamKey, title: "Printer on fire" });
  return call(baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, {
    key: tenant.agent,
    body: {
      fencingToken: attempt.fencingToken,
      outcome: "succeeded",
      result: { statusCode: 201, body: { ticket: sent.effect.id }, resourceId: sent.effect.id },
      provider: { requestId: `req_${sent.effect.id}`, resourceId: sent.effect.id },
    },
  });
}

describe("concurrent claims over two instances on one database", () => {
  it("grants exactly one of 100 simultaneous claims of the same key, and the provider sees exactly one effect", async () => {
    // setup
    const idemKey = "race-same-key-1";
    const body = { tool: tools.race, args: { title: "Printer on fire", priority: 2 } };

    // action: 100 agents retry the same intent at once, half on each instance
    const claims = await concurrentClaims(100, () => idemKey, body);

    // assertion: one winner, everyone else told the work is in progress (and when to come back)
    expect(countBy(claims, statusAndCode)).toEqual({ "201": 1, "409 operation-in-progress": 99 });
    for (const r of claims.filter((c) => c.status === 409)) {
      expect(r.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    }
    const winner = claims.find((c) => c.status === 201)!;
    expect(winner.body).toMatchObject({ state: "processing", tool: tools.race, attempt: { number: 1 } });

    // action: every agent acts on its reply; only the 201 may call the provider
    const completions = (await Promise.all(claims.map((r, i) => actIfGranted(r, provider, baseUrlFor(i))))).filter((c) => c !== null);
    expect(completions.map((c) => c.status)).toEqual([200]);
    expect(completions[0]!.body).toMatchObject({ operationId: winner.body.operationId, state: "succeeded" });

    // action: 100 late retries of the same intent, again over both instances
    const replays = await concurrentClaims(100, () => idemKey, body);

    // assertion: all get the stored result, byte for byte, marked as a replay
    expect(countBy(replays, (r) => String(r.status))).toEqual({ "200": 100 });
    expect(new Set(replays.map((r) => r.text)).size).toBe(1);
    expect(replays.every((r) => r.headers.get("idempotent-replayed") === "true")).toBe(true);
    expect(replays[0]!.body).toMatchObject({ operationId: winner.body.operationId, state: "succeeded", result: { statusCode: 201 } });

    // assertion: the business outcome — one ticket downstream, one operation and one attempt stored
    const effects = (await call(provider.url, "GET", "/effects")).body.effects as { downstreamKey: string }[];
    expect(effects.map((e) => e.downstreamKey)).toEqual([winner.body.downstreamKey]);
    const operations = await app.db.operation.findMany({ where: { tenantId: tenant.tenantId, tool: tools.race } });
    expect(operations.map((o) => o.id)).toEqual([winner.body.operationId]);
    expect(operations[0]!.state).toBe("succeeded");
    expect(await app.db.attempt.count({ where: { tenantId: tenant.tenantId, operationId: winner.body.operationId } })).toBe(1);
  });

  it("does not collapse 50 identical actions that carry 50 different keys: each is its own operation", async () => {
    // setup: the same arguments every time — legitimately sending two identical messages is allowed
    const body = { tool: tools.distinct, args: { to: "ops@example.com", text: "disk full" } };

    // action
    const claims = await concurrentClaims(50, (i) => `race-distinct-${i}`, body);

    // assertion: 50 grants, 50 operations, 50 different downstream keys for the provider
    expect(countBy(claims, statusAndCode)).toEqual({ "201": 50 });
    expect(new Set(claims.map((c) => c.body.operationId)).size).toBe(50);
    expect(new Set(claims.map((c) => c.body.downstreamKey)).size).toBe(50);
    expect(await app.db.operation.count({ where: { tenantId: tenant.tenantId, tool: tools.distinct } })).toBe(50);
    expect(await app.db.attempt.count({ where: { tenantId: tenant.tenantId, operation: { tool: tools.distinct } } })).toBe(50);
  });

  it("lets exactly one of 20 simultaneous claims take over an expired lease, with a larger fencing token", async () => {
    // setup: attempt 1 is granted, then its executor goes silent (crashed, partitioned)
    const idemKey = "race-takeover-1";
    const body = { tool: tools.takeover, args: { amount: 1200, currency: "eur" } };
    const first = await claim(app.servers[0]!.baseUrl, tenant.agent, idemKey, body);
    expect(first.status).toBe(201);
    const firstToken = BigInt(first.body.attempt.fencingToken as string);
    // The silent executor did reach the provider before going quiet.
    await callProvider(dedupingProvider, { downstreamKey: first.body.downstreamKey as string, amount: 1200 });
    // The operator lengthens the lease for attempts started from now on, so the new holder
    // keeps its lease for the whole test even on a slow machine (attempt 1 still has 1 s).
    expect((await putTool(tools.takeover, { policy: { leaseSeconds: 60, takeover: "deduplicated", maxAttempts: 3 } })).status).toBe(200);
    await waitUntilLeaseExpired(app.db, first.body.operationId as string);

    // action: 20 retries at once over both instances
    const claims = await concurrentClaims(20, () => idemKey, body);

    // assertion: one takeover (attempt 2, larger token, same downstreamKey), 19 told to wait
    expect(countBy(claims, statusAndCode)).toEqual({ "201": 1, "409 operation-in-progress": 19 });
    const winner = claims.find((c) => c.status === 201)!;
    expect(winner.body).toMatchObject({ operationId: first.body.operationId, downstreamKey: first.body.downstreamKey, attempt: { number: 2 } });
    expect(BigInt(winner.body.attempt.fencingToken as string)).toBeGreaterThan(firstToken);

    // assertion: the zombie's late report is refused; the new holder's is accepted
    const zombie = await call(app.servers[1]!.baseUrl, "POST", `/api/v1/operations/${first.body.operationId}/complete`, {
      key: tenant.agent,
      body: { fencingToken: first.body.attempt.fencingToken, outcome: "succeeded" },
    });
    expect(zombie.status).toBe(409);
    expect(zombie.body.code).toBe("lease-lost");
    const done = await actIfGranted(winner, dedupingProvider, app.servers[0]!.baseUrl);
    expect(done?.status).toBe(200);
    expect(done?.body.state).toBe("succeeded");

    // assertion: two attempts stored, the first marked taken over; the deduping provider
    // was called twice under one downstreamKey and holds one charge
    const attempts = await app.db.attempt.findMany({ where: { tenantId: tenant.tenantId, operationId: first.body.operationId }, orderBy: { number: "asc" } });
    expect(attempts.map((a) => [a.number, a.outcome])).toEqual([
      [1, "taken_over"],
      [2, "succeeded"],
    ]);
    expect(dedupingProvider.requests()).toBe(2);
    expect(dedupingProvider.effects().map((e) => e.downstreamKey)).toEqual([first.body.downstreamKey]);
  });
});

