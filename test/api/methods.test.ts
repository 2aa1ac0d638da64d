import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { startTestApp, type TestApp } from "../support/test-app";

// A method a route does not serve is a problem+json 405 with an Allow header, like every other
// error (Next.js alone answers an empty 405), and OPTIONS lists what is served. Every route file under app/api is read here, so a
// new route that forgets `otherMethods` fails this test.

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

type RouteFile = { file: string; url: string; serves: string[] };

function routeFiles(dir = "app/api"): RouteFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    // The catch-all 404 route serves no method; next-auth's is checked at one of its paths.
    if (entry.isDirectory()) return entry.name === "[[...path]]" ? [] : routeFiles(full);
    if (entry.name !== "route.ts") return [];
    const source = readFileSync(full, "utf8");
    const serves = METHODS.filter((m) => new RegExp(`^export (const|async function|function) ${m}\\b|^export \\{[^}]*\\bas ${m}\\b`, "m").test(source));
    // A concrete URL: every [param] becomes a value of its own.
    const url = `/${path.dirname(full).slice("app/".length)}`.replace(/\[\.\.\.nextauth\]/, "session").replace(/\[([^\]]+)\]/g, "x-$1");
    return [{ file: full, url, serves }];
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});

const routes = routeFiles();

describe("methods a route does not serve", () => {
  it("finds the route files (and each serves something)", () => {
    expect(routes.length).toBeGreaterThan(30);
    for (const r of routes) expect(r.serves.length, r.file).toBeGreaterThan(0);
  });

  it.each(routes)("$url ($serves): every other method is a problem+json 405 with Allow", async ({ url, serves, file }) => {
    const source = readFileSync(file, "utf8");
    expect(source, `${file} exports otherMethods`).toMatch(/= otherMethods\(/);
    expect(source, `${file} exports OPTIONS from otherMethods`).toMatch(/\bOPTIONS \} = otherMethods\(/);
    const allow = [...serves, ...(serves.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
    for (const method of METHODS.filter((m) => !serves.includes(m))) {
      const res = await call(app.baseUrl, method, url, method === "GET" || method === "DELETE" ? {} : { body: {} });
      expect(res.status, `${method} ${url}: ${res.text}`).toBe(405);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body).toMatchObject({ status: 405, code: "method-not-allowed" });
      expect(res.headers.get("allow")).toBe(allow);
    }
    // OPTIONS names exactly what is served (Next.js's own answer listed every exported handler,
    // the 405 ones included), with no body.
    const options = await call(app.baseUrl, "OPTIONS", url, {});
    expect(options.status, `OPTIONS ${url}: ${options.text}`).toBe(204);
    expect(options.headers.get("allow")).toBe(allow);
    expect(options.text).toBe("");
    expect(options.headers.get("x-request-id")).toBeTruthy();
  });

  it("an /api path no route serves is a problem+json 404 for OPTIONS too (Next.js answered 204 with every method)", async () => {
    for (const url of ["/api", "/api/nope", "/api/v1/nope/deeper"]) {
      const res = await call(app.baseUrl, "OPTIONS", url, {});
      expect(res.status, `OPTIONS ${url}: ${res.text}`).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("allow")).toBeNull();
    }
  });
});
