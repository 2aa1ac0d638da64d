import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, claim, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// The hot path (claim, heartbeat, complete) is budgeted at ONE SQL statement per request:
// every extra round trip costs more than the SQL itself on this stack (see STACK.md). The
// server counts every statement it sends in tollgate_db_queries_total; /api/metrics sends none.
let app: TestApp;
let tenant: TenantKeys;
const tool = "qc.tickets-create";

beforeAll(async () => {
  app = await startTestApp();
  tenant = await seedTenant(app.db, "qc");
  expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${tool}`, { key: tenant.admin, body: {} })).status).toBe(201);
});

afterAll(async () => {
  await app?.stop();
});

async function queriesSoFar(): Promise<number> {
  const res = await call(app.baseUrl, "GET", "/api/metrics");
  expect(res.status).toBe(200);
  const match = /^tollgate_db_queries_total (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(res.text);
  if (!match?.[1]) throw new Error(`tollgate_db_queries_total not found in /api/metrics:\n${res.text.slice(0, 500)}`);
  return Number(match[1]);
}

// The API-key lookup is cached per instance for a few seconds on hot-path routes, so a busy
// agent pays for it once. A claim without an Idempotency-Key authenticates (filling the cache)
// and is then refused before any other SQL, so it warms the cache without storing anything.
async function warmKeyCache(key: string): Promise<void> {
  const res = await call(app.baseUrl, "POST", "/api/v1/operations", { key, body: { tool, args: {} } });
  expect(res.body?.code).toBe("idempotency-key-missing");
}

// Warm-up and measurement run back to back so the cached key (TTL 5 s) is still fresh.
async function statementsFor(request: () => Promise<Reply>): Promise<{ reply: Reply; statements: number }> {
  await warmKeyCache(tenant.agent);
  const before = await queriesSoFar();
  const reply = await request();
  const after = await queriesSoFar();
  return { reply, statements: after - before };
}

describe("one SQL statement per hot-path request", () => {
  const idemKey = "qc-key-1";
  const body = { tool, args: { title: "Printer on fire" } };
  let granted: Reply;
  const complete = () => ({ fencingToken: granted.body.attempt.fencingToken, outcome: "succeeded", result: { statusCode: 201, body: { ticket: "T-1" } } });

  it("a new claim (201) costs one statement", async () => {
    const { reply, statements } = await statementsFor(() => claim(app.baseUrl, tenant.agent, idemKey, body));
    expect(reply.status).toBe(201);
    granted = reply;
    expect(statements).toBe(1);
  });

  it("a claim refused because the lease is held (409) costs one statement", async () => {
    const { reply, statements } = await statementsFor(() => claim(app.baseUrl, tenant.agent, idemKey, body));
    expect(reply.status).toBe(409);
    expect(reply.body.code).toBe("operation-in-progress");
    expect(statements).toBe(1);
  });

  it("a heartbeat costs one statement", async () => {
    const { reply, statements } = await statementsFor(() =>
      call(app.baseUrl, "POST", `/api/v1/operations/${granted.body.operationId}/heartbeat`, {
        key: tenant.agent,
        body: { fencingToken: granted.body.attempt.fencingToken },
      }),
    );
    expect(reply.status).toBe(200);
    expect(statements).toBe(1);
  });

  it("a complete costs one statement", async () => {
    const { reply, statements } = await statementsFor(() =>
      call(app.baseUrl, "POST", `/api/v1/operations/${granted.body.operationId}/complete`, { key: tenant.agent, body: complete() }),
    );
    expect(reply.status).toBe(200);
    expect(reply.body.state).toBe("succeeded");
    expect(statements).toBe(1);
  });

  it("a replay of the stored result (200) costs one statement", async () => {
    const { reply, statements } = await statementsFor(() => claim(app.baseUrl, tenant.agent, idemKey, body));
    expect(reply.status).toBe(200);
    expect(reply.headers.get("idempotent-replayed")).toBe("true");
    expect(statements).toBe(1);
  });

  it("the metrics route itself sends no SQL, so the figures above are not inflated or hidden by it", async () => {
    const first = await queriesSoFar();
    const second = await queriesSoFar();
    expect(second - first).toBe(0);
  });
});
