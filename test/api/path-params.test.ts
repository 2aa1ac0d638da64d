import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
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

// Unstorable once decoded. (A lone surrogate cannot be sent: %ED%A0%80 is not UTF-8, and Next.js
// answers such a path itself, before any route code runs; see the README.)
const BAD_VALUES = ["a%00b", "%00"];

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
        const url = template.replace(/\[([^\]]+)\]/g, (_, p: string) => (p === param ? bad : `x-${p}`));
        for (const method of serves) {
          for (const key of [acme.agent, acme.approver, acme.admin]) {
            const res = await call(app.baseUrl, method, url, method === "GET" || method === "DELETE" ? { key } : { key, body: bodyFor(template) });
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
