import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, claim } from "../support/http";
import { createTool, expectProblem } from "../support/protocol";
import { seedTenant, startServer, stopServer, type Server, type TenantKeys, type TestApp, startTestApp } from "../support/test-app";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy";
import { waitFor } from "../support/wait-for";

// When PostgreSQL cannot be reached, every API route answers 503 service-unavailable with
// Retry-After and says whether the request can have been recorded; never a 500, and the server
// serves again as soon as the database is back. The server here reaches its database through a
// TCP proxy the test can take down (the hot path's own cases: hot-path-connection.test.ts).

let app: TestApp;
let acme: TenantKeys;
let tool: string;
let proxy: TcpProxy;
let server: Server;
let locker: pg.Client;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "down");
  tool = await createTool(app.baseUrl, [acme]);
  const target = new URL(app.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  server = await startServer(proxy.url(app.url));
  locker = new pg.Client({ connectionString: app.url });
  await locker.connect();
});
afterAll(async () => {
  await locker?.end();
  if (server) await stopServer(server);
  await proxy?.close();
  await app?.stop();
});

const putTool = (description: string) =>
  call(server.baseUrl, "PUT", `/api/v1/tools/${tool}`, { key: acme.admin, body: { description } });

describe("a database that cannot be reached", () => {
  it("console and admin routes answer 503 with Retry-After, nothing stored, and serve again once it is back", async () => {
    expect((await call(server.baseUrl, "GET", `/api/v1/tools/${tool}`, { key: acme.admin })).status).toBe(200);
    await proxy.down();
    try {
      // The pool's open connections broke with it (a statement on one of them would be in doubt);
      // once the server has noticed, nothing can reach the database.
      await waitFor("the server to notice", async () => (await call(server.baseUrl, "GET", "/api/health")).status === 503 || null);
      for (const res of [await call(server.baseUrl, "GET", `/api/v1/tools/${tool}`, { key: acme.admin }), await putTool("while down")]) {
        expectProblem(res, 503, "service-unavailable");
        expect(res.headers.get("retry-after")).toBe("1");
        expect(res.body.detail).toMatch(/nothing was stored\. Retry it\.$/);
      }
      // The hot path (its own connection) says the same.
      const refused = await claim(server.baseUrl, acme.agent, `down-${randomUUID()}`, { tool, args: {} });
      expectProblem(refused, 503, "service-unavailable");
      const health = await call(server.baseUrl, "GET", "/api/health");
      expectProblem(health, 503, "service-unavailable");
      expect(health.headers.get("retry-after")).toBe("1");
    } finally {
      await proxy.up();
    }
    const back = await putTool("after");
    expect(back.status, back.text).toBe(200);
    expect(back.body.description).toBe("after");
    expect((await claim(server.baseUrl, acme.agent, `back-${randomUUID()}`, { tool, args: {} })).status).toBe(201);

    // The log says why, with the database's own code, and no key.
    const failed = server.logs.filter((line) => line.includes('"request failed"')).map((line) => JSON.parse(line));
    expect(failed.map((l) => [l.status, l.cause?.code])).toContainEqual([503, "DatabaseNotReachable"]);
    expect(server.logs.join("\n")).not.toContain(acme.admin);
  });

  it("the OpenAPI document declares that 503 and its Retry-After on every route that authenticates", async () => {
    const doc = (await call(app.baseUrl, "GET", "/api/v1/openapi.json")).body;
    const operations = Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { required?: boolean }> }> }>>).flatMap(
      ([path, item]) => Object.entries(item).filter(([, op]) => op.responses?.["401"]).map(([method, op]) => ({ at: `${method} ${path}`, op })),
    );
    expect(operations.length).toBeGreaterThan(15);
    for (const { at, op } of operations) expect(op.responses["503"]?.headers?.["Retry-After"]?.required, at).toBe(true);
  });

  it("a connection that breaks while a change waits in PostgreSQL: 503, it may have been recorded, look before repeating", async () => {
    const [row] = (await locker.query<{ tenant_id: string }>("SELECT tenant_id FROM tool WHERE name = $1", [tool])).rows;
    await locker.query("BEGIN");
    await locker.query("SELECT id FROM tool WHERE tenant_id = $1 AND name = $2 FOR UPDATE", [row!.tenant_id, tool]);
    const pending = putTool("in doubt");
    try {
      await waitFor("the PUT waiting on the row lock", async () =>
        (await locker.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rowCount || null,
      );
      proxy.cut();
      const res = await pending;
      expectProblem(res, 503, "service-unavailable");
      expect(res.body.detail).toMatch(/may or may not have been recorded\. Read what is stored before repeating a change/);
      const requestId = res.headers.get("x-request-id");
      const logged = await waitFor("the request's log line", () =>
        server.logs.filter((line) => line.includes(`"${requestId}"`)).map((line) => JSON.parse(line))[0],
      );
      expect(logged.cause).toEqual({ message: "Connection terminated unexpectedly" });
    } finally {
      await locker.query("ROLLBACK");
    }
    const read = await call(server.baseUrl, "GET", `/api/v1/tools/${tool}`, { key: acme.admin });
    expect(read.status).toBe(200);
    expect(["after", "in doubt"]).toContain(read.body.description);
    expect((await putTool("repeated")).status).toBe(200);
  });
});
