import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, claim, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// /api/v1/openapi.json is what client generators and agent frameworks read. These tests hold
// it to the running server: every real response (success and problem) must validate against
// the schema the document declares for that path, method and status.
let app: TestApp;
let tenant: TenantKeys;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document is walked by arbitrary JSON pointers
let doc: any;
let ajv: Ajv2020;

// The document's own URI: per OpenAPI 3.1, "#/..." references inside it (including inside
// schemas in components) resolve against the document, so it is registered whole under one id.
const DOC_ID = "https://tollgate.test/api/v1/openapi.json";
const tools = { plain: "oa.tickets-create", approval: "oa.refunds-create", backoff: "oa.flaky-call" } as const;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await seedTenant(app.db, "oa");
  const res = await call(app.baseUrl, "GET", "/api/v1/openapi.json");
  expect(res.status).toBe(200);
  doc = res.body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ ...doc, $id: DOC_ID });
});

afterAll(async () => {
  await app?.stop();
});

const pendingApprovalId = async () => (await app.db.approval.findFirstOrThrow({ where: { tenantId: tenant.tenantId } })).id;

const pointerPart = (s: string) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1"));

function responseSpec(pathTemplate: string, method: string, status: number) {
  const response = doc.paths?.[pathTemplate]?.[method]?.responses?.[String(status)];
  if (!response) throw new Error(`${method.toUpperCase()} ${pathTemplate} does not document a ${status} response`);
  return response as { content?: Record<string, { schema?: unknown }>; headers?: Record<string, { required?: boolean; schema?: { const?: string; pattern?: string } }> };
}

const validators = new Map<string, ValidateFunction>();
function validatorFor(pathTemplate: string, method: string, status: number, mediaType: string): ValidateFunction {
  const pointer = ["paths", pathTemplate, method, "responses", String(status), "content", mediaType, "schema"].map(pointerPart).join("/");
  const ref = `${DOC_ID}#/${pointer}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

// The real answer has the documented status, the documented media type, and a body the
// documented schema accepts; a problem's code is one the document lists.
function expectDocumented(reply: Reply, pathTemplate: string, method: string, status: number): void {
  expect(reply.status, reply.text).toBe(status);
  const spec = responseSpec(pathTemplate, method, status);
  const mediaType = (reply.headers.get("content-type") ?? "").split(";")[0]!.trim();
  expect(Object.keys(spec.content ?? {})).toContain(mediaType);
  const validate = validatorFor(pathTemplate, method, status, mediaType);
  const valid = validate(reply.body);
  expect(validate.errors ?? [], `${method.toUpperCase()} ${pathTemplate} ${status}: ${reply.text}`).toEqual([]);
  expect(valid).toBe(true);
  if (status >= 400) {
    expect(doc.components.schemas.Problem.properties.code.enum).toContain(reply.body.code);
  }
  // Every header the document requires is on the real answer, with a value its schema allows.
  for (const [name, spec2] of Object.entries(spec.headers ?? {})) {
    const value = reply.headers.get(name);
    if (!spec2.required && value === null) continue;
    expect(value, `${method.toUpperCase()} ${pathTemplate} ${status}: header ${name}`).not.toBeNull();
    if (spec2.schema?.const !== undefined) expect(value).toBe(spec2.schema.const);
    if (spec2.schema?.pattern) expect(value).toMatch(new RegExp(spec2.schema.pattern));
  }
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 and documents every operation of the agent contract", () => {
    expect(doc.openapi).toBe("3.1.0");
    const contract: [string, string][] = [
      ["/api/v1/tools", "get"],
      ["/api/v1/tools/{name}", "put"],
      ["/api/v1/tools/{name}", "get"],
      ["/api/v1/operations", "post"],
      ["/api/v1/operations", "get"],
      ["/api/v1/operations/{id}", "get"],
      ["/api/v1/operations/{id}/heartbeat", "post"],
      ["/api/v1/operations/{id}/complete", "post"],
      ["/api/v1/operations/{id}/resolve", "post"],
    ];
    const documented = (p: string, m: string) => Boolean(doc.paths?.[p]?.[m]);
    expect(contract.filter(([p, m]) => !documented(p, m))).toEqual([]);
  });

  it("documents every route handler the server actually serves under /api/v1", () => {
    // Walk app/api/v1 so a route added later without documentation fails here.
    const served = routeHandlers(path.resolve("app", "api", "v1"), "/api/v1").filter(({ route }) => route !== "/api/v1/openapi.json");
    expect(served.length).toBeGreaterThan(5);
    const missing = served.filter(({ route, method }) => !doc.paths?.[route]?.[method]).map(({ route, method }) => `${method.toUpperCase()} ${route}`);
    expect(missing).toEqual([]);
  });

  // API review: every problem had one open schema, so a generated client had no typed `mismatch`.
  it("types the fields some problems carry: the 422's differing paths, the 429's notBefore, the 400's errors", () => {
    const schemas = doc.components.schemas;
    const claimProblem = (status: string) => doc.paths["/api/v1/operations"].post.responses[status].content["application/problem+json"].schema.$ref;
    expect([claimProblem("400"), claimProblem("409"), claimProblem("413"), claimProblem("422"), claimProblem("429")]).toEqual(
      ["InvalidRequestProblem", "ClaimConflictProblem", "PayloadTooLargeProblem", "KeyReusedProblem", "RetryBackoffProblem"].map((n) => `#/components/schemas/${n}`),
    );
    expect(schemas.KeyReusedProblem.required).toEqual(expect.arrayContaining(["code", "operationId", "mismatch"]));
    expect(schemas.KeyReusedProblem.properties.mismatch).toMatchObject({ type: "array", items: { type: "string" } });
    expect(schemas.RetryBackoffProblem.required).toEqual(expect.arrayContaining(["operationId", "notBefore"]));
    expect(schemas.InvalidRequestProblem.properties.errors.items.required).toEqual(["path", "message"]);
  });

  it("has no dangling references: every local $ref resolves inside the document", () => {
    const dangling: string[] = [];
    walk(doc, "", (value, at) => {
      const ref = (value as { $ref?: unknown }).$ref;
      if (typeof ref === "string" && ref.startsWith("#") && resolvePointer(doc, ref.slice(1)) === undefined) dangling.push(`${at} → ${ref}`);
    });
    expect(dangling).toEqual([]);
  });
});

describe("real responses validate against the documented schemas", () => {
  const idemKey = "oa-key-1";
  const claimBody = { tool: tools.plain, args: { title: "Printer on fire" } };
  let granted: Reply;

  // Run in order: later cases use the operation the earlier ones created.
  const cases: { name: string; path: string; method: string; status: number; send: () => Promise<Reply> }[] = [
    { name: "tool created", path: "/api/v1/tools/{name}", method: "put", status: 201, send: () => putTool(tools.plain, { description: "Open a ticket" }) },
    { name: "tool replaced", path: "/api/v1/tools/{name}", method: "put", status: 200, send: () => putTool(tools.plain, { description: "Open a support ticket" }) },
    { name: "tool read", path: "/api/v1/tools/{name}", method: "get", status: 200, send: () => call(app.baseUrl, "GET", `/api/v1/tools/${tools.plain}`, { key: tenant.admin }) },
    { name: "tools listed", path: "/api/v1/tools", method: "get", status: 200, send: () => call(app.baseUrl, "GET", "/api/v1/tools", { key: tenant.admin }) },
    {
      name: "claim granted",
      path: "/api/v1/operations",
      method: "post",
      status: 201,
      send: async () => (granted = await claim(app.baseUrl, tenant.agent, idemKey, claimBody)),
    },
    {
      name: "claim awaiting approval",
      path: "/api/v1/operations",
      method: "post",
      status: 202,
      send: async () => {
        expect((await putTool(tools.approval, { policy: { approval: "required" } })).status).toBe(201);
        return claim(app.baseUrl, tenant.agent, "oa-approval-1", { tool: tools.approval, args: { amount: 5 } });
      },
    },
    { name: "approvals listed", path: "/api/v1/approvals", method: "get", status: 200, send: () => call(app.baseUrl, "GET", "/api/v1/approvals?state=pending", { key: tenant.approver }) },
    { name: "approval read", path: "/api/v1/approvals/{id}", method: "get", status: 200, send: async () => call(app.baseUrl, "GET", `/api/v1/approvals/${await pendingApprovalId()}`, { key: tenant.approver }) },
    {
      name: "approval decided",
      path: "/api/v1/approvals/{id}/decision",
      method: "post",
      status: 200,
      send: async () => call(app.baseUrl, "POST", `/api/v1/approvals/${await pendingApprovalId()}/decision`, { key: tenant.approver, body: { decision: "approve", reason: "ok" } }),
    },
    {
      name: "problem: approval already decided",
      path: "/api/v1/approvals/{id}/decision",
      method: "post",
      status: 409,
      send: async () => call(app.baseUrl, "POST", `/api/v1/approvals/${await pendingApprovalId()}/decision`, { key: tenant.approver, body: { decision: "reject", reason: "no" } }),
    },
    { name: "claim while the lease is held", path: "/api/v1/operations", method: "post", status: 409, send: () => claim(app.baseUrl, tenant.agent, idemKey, claimBody) },
    {
      name: "claim reusing the key with other args",
      path: "/api/v1/operations",
      method: "post",
      status: 422,
      send: () => claim(app.baseUrl, tenant.agent, idemKey, { tool: tools.plain, args: { title: "Printer fixed" } }),
    },
    {
      name: "heartbeat",
      path: "/api/v1/operations/{id}/heartbeat",
      method: "post",
      status: 200,
      send: () => call(app.baseUrl, "POST", `/api/v1/operations/${granted.body.operationId}/heartbeat`, { key: tenant.agent, body: { fencingToken: granted.body.attempt.fencingToken } }),
    },
    { name: "status view while processing", path: "/api/v1/operations/{id}", method: "get", status: 200, send: () => call(app.baseUrl, "GET", `/api/v1/operations/${granted.body.operationId}`, { key: tenant.agent }) },
    {
      name: "side effect recorded",
      path: "/api/v1/operations/{id}/side-effects/{name}",
      method: "put",
      status: 200,
      send: () =>
        call(app.baseUrl, "PUT", `/api/v1/operations/${granted.body.operationId}/side-effects/charge`, {
          key: tenant.agent,
          body: { fencingToken: granted.body.attempt.fencingToken, provider: "stripe", state: "confirmed", providerResourceId: "ch_1" },
        }),
    },
    {
      name: "problem: side effect moving backwards",
      path: "/api/v1/operations/{id}/side-effects/{name}",
      method: "put",
      status: 409,
      send: () =>
        call(app.baseUrl, "PUT", `/api/v1/operations/${granted.body.operationId}/side-effects/charge`, {
          key: tenant.agent,
          // From one final state to the other (a report behind a final state is 200 since 2026-12-01).
          body: { fencingToken: granted.body.attempt.fencingToken, provider: "stripe", state: "failed" },
        }),
    },
    { name: "event subscription created", path: "/api/v1/event-subscriptions/{name}", method: "put", status: 201, send: () => call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/oa-feed", { key: tenant.admin, body: { url: "https://hooks.example.com/x", events: ["operation.unknown"] } }) },
    { name: "event subscription replaced", path: "/api/v1/event-subscriptions/{name}", method: "put", status: 200, send: () => call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/oa-feed", { key: tenant.admin, body: { url: "https://hooks.example.com/y", events: ["operation.unknown", "approval.requested"] } }) },
    { name: "event subscription read", path: "/api/v1/event-subscriptions/{name}", method: "get", status: 200, send: () => call(app.baseUrl, "GET", "/api/v1/event-subscriptions/oa-feed", { key: tenant.admin }) },
    { name: "event subscriptions listed", path: "/api/v1/event-subscriptions", method: "get", status: 200, send: () => call(app.baseUrl, "GET", "/api/v1/event-subscriptions", { key: tenant.admin }) },
    {
      name: "complete",
      path: "/api/v1/operations/{id}/complete",
      method: "post",
      status: 200,
      send: () =>
        call(app.baseUrl, "POST", `/api/v1/operations/${granted.body.operationId}/complete`, {
          key: tenant.agent,
          body: {
            fencingToken: granted.body.attempt.fencingToken,
            outcome: "succeeded",
            result: { statusCode: 201, body: { ticket: "T-9", tags: ["a", 1, null, { deep: true }] }, resourceId: "T-9" },
            provider: { requestId: "req_1", resourceId: "T-9" },
          },
        }),
    },
    { name: "replay", path: "/api/v1/operations", method: "post", status: 200, send: () => claim(app.baseUrl, tenant.agent, idemKey, claimBody) },
    {
      name: "status view found by tool and key",
      path: "/api/v1/operations",
      method: "get",
      status: 200,
      send: () => call(app.baseUrl, "GET", `/api/v1/operations?tool=${tools.plain}&idempotencyKey=${idemKey}`, { key: tenant.agent }),
    },
    {
      name: "heartbeat after completion (lease lost)",
      path: "/api/v1/operations/{id}/heartbeat",
      method: "post",
      status: 409,
      send: () => call(app.baseUrl, "POST", `/api/v1/operations/${granted.body.operationId}/heartbeat`, { key: tenant.agent, body: { fencingToken: granted.body.attempt.fencingToken } }),
    },
    { name: "problem: Idempotency-Key missing", path: "/api/v1/operations", method: "post", status: 400, send: () => call(app.baseUrl, "POST", "/api/v1/operations", { key: tenant.agent, body: claimBody }) },
    { name: "problem: invalid tool policy", path: "/api/v1/tools/{name}", method: "put", status: 400, send: () => putTool(tools.plain, { policy: { leaseSeconds: 0 } }) },
    { name: "problem: no API key", path: "/api/v1/operations", method: "post", status: 401, send: () => call(app.baseUrl, "POST", "/api/v1/operations", { idempotencyKey: "oa-x", body: claimBody }) },
    { name: "problem: wrong role", path: "/api/v1/operations", method: "post", status: 403, send: () => claim(app.baseUrl, tenant.approver, "oa-x", claimBody) },
    { name: "problem: unknown tool", path: "/api/v1/operations", method: "post", status: 404, send: () => claim(app.baseUrl, tenant.agent, "oa-x", { tool: "oa.missing", args: {} }) },
    { name: "problem: unknown operation", path: "/api/v1/operations/{id}", method: "get", status: 404, send: () => call(app.baseUrl, "GET", "/api/v1/operations/op_missing", { key: tenant.agent }) },
    {
      name: "problem: body too large",
      path: "/api/v1/operations",
      method: "post",
      status: 413,
      send: () => claim(app.baseUrl, tenant.agent, "oa-x", { tool: tools.plain, args: { pad: "x".repeat(70 * 1024) } }),
    },
    {
      name: "problem: retry backoff",
      path: "/api/v1/operations",
      method: "post",
      status: 429,
      send: async () => {
        // An attempt that failed, retryable, with a backoff long enough to still run when re-claimed.
        expect((await putTool(tools.backoff, { policy: { maxAttempts: 3, backoff: { baseMs: 60_000, capMs: 60_000 } } })).status).toBe(201);
        const first = await claim(app.baseUrl, tenant.agent, "oa-backoff", { tool: tools.backoff, args: {} });
        const failed = await call(app.baseUrl, "POST", `/api/v1/operations/${first.body.operationId}/complete`, {
          key: tenant.agent,
          body: { fencingToken: first.body.attempt.fencingToken, outcome: "failed", retryable: true, error: { code: "timeout", message: "the provider did not answer" } },
        });
        expect(failed.status, failed.text).toBe(200);
        await app.db.operation.update({ where: { id: first.body.operationId }, data: { notBefore: new Date(Date.now() + 60_000) } });
        return claim(app.baseUrl, tenant.agent, "oa-backoff", { tool: tools.backoff, args: {} });
      },
    },
    {
      name: "problem: not JSON",
      path: "/api/v1/operations",
      method: "post",
      status: 415,
      send: () => call(app.baseUrl, "POST", "/api/v1/operations", { key: tenant.agent, idempotencyKey: "oa-x", rawBody: "tool=x", headers: { "content-type": "text/plain" } }),
    },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.method.toUpperCase()} ${c.path} ${c.status} matches its documented schema`, async () => {
      const reply = await c.send();
      expectDocumented(reply, c.path, c.method, c.status);
    });
  }
});

function putTool(name: string, definition: Record<string, unknown>): Promise<Reply> {
  return call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: tenant.admin, body: definition });
}

// app/api/v1/operations/[id]/route.ts exporting POST → { route: "/api/v1/operations/{id}", method: "post" }
function routeHandlers(dir: string, route: string): { route: string; method: string }[] {
  const found: { route: string; method: string }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (entry.name.startsWith("[...")) continue; // catch-all 404 handler
      const segment = entry.name.replace(/^\[(.+)\]$/, "{$1}");
      found.push(...routeHandlers(path.join(dir, entry.name), `${route}/${segment}`));
    } else if (entry.name === "route.ts") {
      const source = readFileSync(path.join(dir, entry.name), "utf8");
      for (const m of source.matchAll(/export\s+(?:const|(?:async\s+)?function)\s+(GET|POST|PUT|PATCH|DELETE)\b/g)) {
        found.push({ route, method: m[1]!.toLowerCase() });
      }
    }
  }
  return found;
}

function walk(value: unknown, at: string, visit: (value: object, at: string) => void): void {
  if (value === null || typeof value !== "object") return;
  visit(value, at);
  for (const [k, v] of Object.entries(value)) walk(v, `${at}/${k}`, visit);
}

function resolvePointer(root: unknown, pointer: string): unknown {
  let node: unknown = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
