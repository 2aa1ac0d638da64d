import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// Next.js decodes a route's path parameters, so `/api/v1/operations/a%00b` hands the handler
// "a\u0000b", which PostgreSQL refuses in a text parameter (a 500 before this test). Every API
// route with a parameter is called here, with each parameter in turn made unstorable, by every
// role, with a body the route would otherwise accept as far as its schema goes: nothing may
// answer a 5xx, and nothing may be stored.

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

type Route = { template: string; params: string[]; serves: string[] };

function apiRoutes(dir = "app/api/v1"): Route[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return apiRoutes(full);
    if (entry.name !== "route.ts") return [];
    const source = readFileSync(full, "utf8");
    const serves = METHODS.filter((m) => new RegExp(`^export (const|async function|function) ${m}\\b`, "m").test(source));
    const template = `/${path.dirname(full).slice("app/".length)}`;
    const params = [...template.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1]!);
    return params.length ? [{ template, params, serves }] : [];
  });
}

// Bodies that pass each route's schema, so the parameter is what reaches the database.
const bodies: Record<string, unknown> = {
  complete: { fencingToken: "1", outcome: "succeeded", result: { ok: true } },
  heartbeat: { fencingToken: "1" },
  resolve: { outcome: "failed", reason: "checked with the provider" },
  decision: { decision: "approve", reason: "fine" },
  "[name]": {},
  webhooks: { type: "x", data: {} },
};
function bodyFor(template: string): unknown {
  if (template.includes("side-effects")) return { fencingToken: "1", provider: "stripe", state: "intended" };
  if (template.includes("webhook-connections")) return { scheme: "standard-webhooks", correlation: { path: "data.id" }, outcomes: {} };
  if (template.includes("event-subscriptions")) return { url: "https://example.com/hook", events: ["operation.succeeded"] };
  const last = template.split("/").at(-1)!;
  return bodies[last] ?? bodies[template.split("/").at(-2)!] ?? {};
}

// What each parameter that cannot exist answers: an id is the route's own 404; a name the route
// validates against its pattern is a 400 like any other bad name.
function expectedCode(template: string, param: string): string {
  if (param === "name") return "invalid-request";
  if (template.startsWith("/api/v1/operations/")) return "operation-not-found";
  if (template.startsWith("/api/v1/approvals/")) return "approval-not-found";
  if (template.startsWith("/api/v1/webhooks/")) return "webhook-connection-not-found";
  return "not-found";
}

// Unstorable once decoded. (A lone surrogate cannot be sent: %ED%A0%80 is not UTF-8, which the
// proxy answers before any route code runs: see "undecodable paths" below.)
const BAD_VALUES = ["a%00b", "%00"];

// Not percent-encoded UTF-8 at all: a bad escape, an encoded lone surrogate, a cut-short sequence.
const UNDECODABLE = ["%ZZ", "%ED%A0%80", "%E0%A4%A"];

let app: TestApp;
let acme: TenantKeys;
beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
});
afterAll(async () => {
  await app?.stop();
});

const routes = apiRoutes();

// The route's path with `param` set to `value` and every other parameter to a harmless name.
function withParam(template: string, param: string, value: string): string {
  return template.replace(/\[([^\]]+)\]/g, (_, p: string) => (p === param ? value : `x-${p}`));
}

function send(method: string, url: string, template: string, key: string): Promise<Reply> {
  return call(app.baseUrl, method, url, method === "GET" || method === "DELETE" ? { key } : { key, body: bodyFor(template) });
}

async function storedRows(): Promise<number> {
  const rows = await app.db.$queryRawUnsafe<{ n: bigint }[]>(
    `SELECT (SELECT count(*) FROM operation) + (SELECT count(*) FROM tool) + (SELECT count(*) FROM event_subscription)
          + (SELECT count(*) FROM webhook_connection) + (SELECT count(*) FROM webhook_event) + (SELECT count(*) FROM audit_event) AS n`,
  );
  return Number(rows[0]!.n);
}

describe("unstorable path parameters", () => {
  it("finds the parameterised routes", () => {
    expect(routes.length).toBeGreaterThanOrEqual(10);
  });

  it.each(routes)("$template ($serves): never a 5xx, nothing stored", async ({ template, params, serves }) => {
    const before = await storedRows();
    for (const bad of BAD_VALUES) {
      for (const param of params) {
        const url = withParam(template, param, bad);
        for (const method of serves) {
          for (const key of [acme.agent, acme.approver, acme.admin]) {
            const res = await send(method, url, template, key);
            expect(res.status, `${method} ${url}: ${res.text}`).toBeLessThan(500);
            expect(res.status, `${method} ${url}: ${res.text}`).toBeGreaterThanOrEqual(400);
            expect(res.headers.get("content-type"), `${method} ${url}`).toBe("application/problem+json");
            // A key whose role the route refuses learns only that (403); any other gets the route's own answer.
            if (res.status !== 403) expect(res.body.code, `${method} ${url}`).toBe(expectedCode(template, param));
          }
        }
      }
    }
    expect(await storedRows()).toBe(before);
  });
});

// Next.js throws while matching such a path to a dynamic route and answered a plain-text 500
// (before proxy.ts). Every parameterised API route, the API's catch-all and the console's pages now
// get a problem+json 400 from the proxy, whatever the method or key, and nothing is stored.
describe("undecodable paths", () => {
  it.each(routes)("$template ($serves): a problem+json 400, nothing stored", async ({ template, params, serves }) => {
    const before = await storedRows();
    for (const bad of UNDECODABLE) {
      for (const param of params) {
        const url = withParam(template, param, bad);
        for (const method of serves) {
          expectUndecodable(await send(method, url, template, acme.admin), `${method} ${url}`, bad);
        }
      }
    }
    expect(await storedRows()).toBe(before);
  });

  it("answers the same outside the parameterised API routes, with or without a key", async () => {
    for (const url of ["/api/%ZZ", "/api/v1/nothing/%ED%A0%80", "/t/%ZZ/operations", "/t/acme/operations/%E0%A4%A", "/%ZZ"]) {
      for (const method of ["GET", "POST"]) {
        expectUndecodable(await call(app.baseUrl, method, url), `${method} ${url}`, url.split("/").find((s) => s.includes("%"))!);
      }
    }
  });

  it("lets a path whose escapes decode through to its route", async () => {
    // "%41" is "A": the route runs, authenticates and answers its own 404.
    const read = await call(app.baseUrl, "GET", "/api/v1/operations/op_%41bc", { key: acme.agent });
    expect(read.status, read.text).toBe(404);
    expect(read.body.code).toBe("operation-not-found");
    expect((await call(app.baseUrl, "GET", "/api/v1/operations/op_%41bc")).body.code).toBe("unauthorized");
  });
});

function expectUndecodable(res: Reply, what: string, segment: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(400);
  expect(res.headers.get("content-type"), what).toBe("application/problem+json");
  expect(res.body.code, what).toBe("invalid-request");
  expect(res.body.detail, what).toBe(`The path segment "${segment}" is not valid percent-encoded UTF-8.`);
  expect(res.headers.get("x-request-id"), what).toMatch(/^req_[0-9a-f-]{36}$/);
}
