import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { startTestApp, type TestApp } from "../support/test-app";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});

describe("health and liveness", () => {
  it("answers /api/health with 200 when the database is up, with a request id", async () => {
    const res = await call(app.baseUrl, "GET", "/api/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, database: "up" });
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("answers /api/live without touching the database", async () => {
    const res = await call(app.baseUrl, "GET", "/api/live");
    expect(res.status).toBe(200);
  });

  // fetch sends Accept-Encoding: gzip, as agents' HTTP clients do. Next.js would gzip every
  // answer; a few hundred bytes go out as they are (lib/http/respond.ts), large ones compressed.
  it("sends small JSON answers uncompressed (no-transform) and compresses large ones, to a client that accepts gzip", async () => {
    const live = await fetch(`${app.baseUrl}/api/live`, { headers: { "accept-encoding": "gzip" } });
    expect(await live.text()).toBe('{"ok":true}');
    expect(live.headers.get("content-encoding")).toBeNull();
    expect(live.headers.get("cache-control")).toBe("no-transform");

    const problem = await fetch(`${app.baseUrl}/api/v1/nope`, { headers: { "accept-encoding": "gzip" } });
    expect(problem.status).toBe(404);
    expect(problem.headers.get("content-encoding")).toBeNull();
    expect(problem.headers.get("cache-control")).toBe("no-transform");

    const large = await fetch(`${app.baseUrl}/api/v1/openapi.json`, { headers: { "accept-encoding": "gzip" } });
    expect(large.headers.get("content-encoding")).toBe("gzip");
    expect((await large.json()).openapi).toMatch(/^3\.1/);
  });

  it("answers unknown API paths with a problem+json 404", async () => {
    const res = await call(app.baseUrl, "GET", "/api/v1/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.code).toBe("not-found");
  });
});
