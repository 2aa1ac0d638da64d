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

  it("answers unknown API paths with a problem+json 404", async () => {
    const res = await call(app.baseUrl, "GET", "/api/v1/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.code).toBe("not-found");
  });
});
