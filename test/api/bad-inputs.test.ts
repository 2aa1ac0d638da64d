import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { call, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// Every way a request can be wrong gets the documented status and `code`, as problem+json,
// and stores nothing: "Validation failures (400/401/403/404/413/415) store nothing."

type Keys = { a: TenantKeys; b: TenantKeys; limited: string; revoked: string };

type BadRequest = {
  name: string;
  method: "GET" | "PUT" | "POST";
  path: string;
  key?: (k: Keys) => string;
  body?: unknown;
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  expected: { status: number; code: string; errorPath?: string; errorMessage?: RegExp };
};

const KiB = 1024;
const TOOL = "tickets.create";
const B_ONLY_TOOL = "beta.secret-tool";
const claimPath = "/api/v1/operations";
const validClaim = { tool: TOOL, args: { title: "Printer on fire" } };

let app: TestApp;
let keys: Keys;

beforeAll(async () => {
  app = await startTestApp();
  const a = await seedTenant(app.db, "alpha");
  const b = await seedTenant(app.db, "beta");
  // Tenant A has TOOL; tenant B has a tool A does not have, to probe cross-tenant access.
  expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${TOOL}`, { key: a.admin, body: {} })).status).toBe(201);
  expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${B_ONLY_TOOL}`, { key: b.admin, body: {} })).status).toBe(201);
  const limited = (await createApiKey({ db: app.db, tenantId: a.tenantId, input: { principal: "limited-bot", role: "agent", tools: ["other.tool"] }, actor: "test" })).secret;
  const doomed = await createApiKey({ db: app.db, tenantId: a.tenantId, input: { principal: "doomed-bot", role: "agent" }, actor: "test" });
  await revokeApiKey({ db: app.db, id: doomed.key.id, actor: "test" });
  keys = { a, b, limited, revoked: doomed.secret };
});

afterAll(async () => {
  await app?.stop();
});

async function storedCounts(): Promise<Record<string, number>> {
  const rows = await app.db.$queryRaw<Record<string, number>[]>`
    SELECT (SELECT count(*) FROM operation)::int AS operation, (SELECT count(*) FROM attempt)::int AS attempt,
           (SELECT count(*) FROM tool)::int AS tool, (SELECT count(*) FROM audit_event)::int AS audit_event,
           (SELECT count(*) FROM approval)::int AS approval, (SELECT count(*) FROM webhook_connection)::int AS webhook_connection`;
  return rows[0]!;
}

function send(c: BadRequest): Promise<Reply> {
  return call(app.baseUrl, c.method, c.path, {
    key: c.key?.(keys),
    body: c.body,
    rawBody: c.rawBody,
    headers: c.headers,
    idempotencyKey: c.idempotencyKey,
  });
}

function expectProblem(res: Reply, expected: BadRequest["expected"]): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status: expected.status, code: expected.code });
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ type: expect.any(String), title: expect.any(String), detail: expect.any(String), status: expected.status });
  if (expected.errorPath !== undefined) {
    expect(res.body.errors).toEqual(expect.arrayContaining([{ path: expected.errorPath, message: expect.any(String) }]));
    expect(res.body.errors[0].path).toBe(expected.errorPath);
  }
  if (expected.errorMessage) expect(res.body.errors[0].message).toMatch(expected.errorMessage);
  // A refused body stays unread on the connection: the client must not send another request on it.
  if (expected.status === 413) expect(res.headers.get("connection")).toBe("close");
}

const toolPut = (name: string, body: unknown): Pick<BadRequest, "method" | "path" | "key" | "body"> => ({
  method: "PUT",
  path: `/api/v1/tools/${name}`,
  key: (k) => k.a.admin,
  body,
});

const policyCases: { name: string; body: unknown; path: string; message?: RegExp }[] = [
  { name: "leaseSeconds 0", body: { policy: { leaseSeconds: 0 } }, path: "policy.leaseSeconds", message: /^must be at least 1$/ },
  { name: "leaseSeconds 3601", body: { policy: { leaseSeconds: 3601 } }, path: "policy.leaseSeconds", message: /^must be at most 3,600$/ },
  { name: "leaseSeconds 1.5", body: { policy: { leaseSeconds: 1.5 } }, path: "policy.leaseSeconds" },
  { name: "leaseSeconds as a string", body: { policy: { leaseSeconds: "30" } }, path: "policy.leaseSeconds", message: /^must be a whole number$/ },
  { name: "maxAttempts 0", body: { policy: { maxAttempts: 0 } }, path: "policy.maxAttempts" },
  { name: "maxAttempts 21", body: { policy: { maxAttempts: 21 } }, path: "policy.maxAttempts" },
  { name: "resultRetentionHours 0", body: { policy: { resultRetentionHours: 0 } }, path: "policy.resultRetentionHours" },
  { name: "resultRetentionHours 2161", body: { policy: { resultRetentionHours: 2161 } }, path: "policy.resultRetentionHours" },
  { name: "backoff.baseMs 0", body: { policy: { backoff: { baseMs: 0 } } }, path: "policy.backoff.baseMs" },
  { name: "backoff.capMs below baseMs", body: { policy: { backoff: { baseMs: 5000, capMs: 1000 } } }, path: "policy.backoff.capMs", message: /^must be at least the first delay \(baseMs\)$/ },
  { name: "takeover \"sometimes\"", body: { policy: { takeover: "sometimes" } }, path: "policy.takeover" },
  { name: "approval \"maybe\"", body: { policy: { approval: "maybe" } }, path: "policy.approval" },
  { name: "approvalTtlSeconds 59", body: { policy: { approvalTtlSeconds: 59 } }, path: "policy.approvalTtlSeconds" },
  // A typo must be an error, not a silently ignored setting; the error must name the typo.
  // An unknown field is named at its own path, as Stripe does, so a typo is found at once.
  { name: "unknown policy field \"leaseSecond\"", body: { policy: { leaseSecond: 30 } }, path: "policy.leaseSecond", message: /leaseSecond/ },
  { name: "unknown top-level field", body: { descripton: "typo" }, path: "descripton", message: /descripton/ },
  { name: "annotations.readOnlyHint \"yes\"", body: { annotations: { readOnlyHint: "yes" } }, path: "annotations.readOnlyHint" },
  { name: "description longer than 2000 characters", body: { description: "d".repeat(2001) }, path: "description" },
  { name: "policy not an object", body: { policy: 5 }, path: "policy" },
];

const cases: BadRequest[] = [
  // Authentication: 401 with a Bearer challenge.
  { name: "no Authorization header (tools)", method: "GET", path: "/api/v1/tools", expected: { status: 401, code: "unauthorized" } },
  { name: "no Authorization header (claim)", method: "POST", path: claimPath, idempotencyKey: "k-noauth", body: validClaim, expected: { status: 401, code: "unauthorized" } },
  { name: "Basic instead of Bearer", method: "GET", path: "/api/v1/tools", headers: { authorization: "Basic YWRtaW46YWRtaW4=" }, expected: { status: 401, code: "unauthorized" } },
  { name: "unknown key (tools)", method: "GET", path: "/api/v1/tools", key: () => "tgk_thisKeyWasNeverIssued000000000000000000", expected: { status: 401, code: "unauthorized" } },
  { name: "unknown key (claim)", method: "POST", path: claimPath, key: () => "tgk_thisKeyWasNeverIssued000000000000000000", idempotencyKey: "k-unknown", body: validClaim, expected: { status: 401, code: "unauthorized" } },
  { name: "revoked key (claim)", method: "POST", path: claimPath, key: (k) => k.revoked, idempotencyKey: "k-revoked", body: validClaim, expected: { status: 401, code: "unauthorized" } },
  { name: "revoked key (read)", method: "GET", path: "/api/v1/operations/op_missing", key: (k) => k.revoked, expected: { status: 401, code: "unauthorized" } },

  // Roles and tool limits: 403.
  { name: "agent key replacing a tool", ...toolPut("x", {}), key: (k) => k.a.agent, expected: { status: 403, code: "forbidden" } },
  { name: "agent key listing tools", method: "GET", path: "/api/v1/tools", key: (k) => k.a.agent, expected: { status: 403, code: "forbidden" } },
  { name: "approver key claiming", method: "POST", path: claimPath, key: (k) => k.a.approver, idempotencyKey: "k-approver", body: validClaim, expected: { status: 403, code: "forbidden" } },
  { name: "key limited to other tools claiming this one", method: "POST", path: claimPath, key: (k) => k.limited, idempotencyKey: "k-limited", body: validClaim, expected: { status: 403, code: "forbidden" } },

  // Another tenant's objects do not exist for you: 404, never 403.
  { name: "another tenant's tool read by name", method: "GET", path: `/api/v1/tools/${B_ONLY_TOOL}`, key: (k) => k.a.admin, expected: { status: 404, code: "tool-not-found" } },
  { name: "another tenant's tool claimed by name", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-cross", body: { tool: B_ONLY_TOOL, args: {} }, expected: { status: 404, code: "tool-not-found" } },
  { name: "a tool nobody registered", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-nosuch", body: { tool: "no.such.tool", args: {} }, expected: { status: 404, code: "tool-not-found" } },

  // Body framing: JSON only, bounded size.
  { name: "malformed JSON (claim)", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-json", rawBody: '{"tool": "tickets.create", "args": {', headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-json" } },
  { name: "malformed JSON (tool PUT)", method: "PUT", path: "/api/v1/tools/x", key: (k) => k.a.admin, rawBody: "{policy:}", headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-json" } },
  { name: "args nested 5,000 levels deep (claim; 10 KB of brackets)", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-deep", rawBody: `{"tool":"${TOOL}","args":{"a":${"[".repeat(5000)}${"]".repeat(5000)}}}`, headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-request", errorPath: "body", errorMessage: /deeper than 128 levels/ } },
  { name: "a number JSON.parse reads as Infinity (claim args, 1e200000)", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-huge", rawBody: `{"tool":"${TOOL}","args":{"n":1e200000}}`, headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-request", errorPath: "args" } },
  // Stored as null by JSON.stringify before the fix: a result silently changed on every replay.
  { name: "a number JSON.parse reads as Infinity (complete result.body, 1e400)", method: "POST", path: "/api/v1/operations/op_x/complete", key: (k) => k.a.agent, rawBody: '{"fencingToken":"1","outcome":"succeeded","result":{"body":{"amount":1e400}}}', headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-request", errorPath: "result.body" } },
  // Zod's record skipped a "__proto__" key unchecked: accepted, then silently dropped.
  { name: 'a probe header named "__proto__" (tool PUT)', method: "PUT", path: "/api/v1/tools/x", key: (k) => k.a.admin, rawBody: '{"policy":{"probe":{"url":"https://a.example.com/","succeeded":{"status":[200]},"headers":{"__proto__":"v","X-A":"1"}}}}', headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-request", errorPath: "policy.probe.headers.__proto__" } },
  { name: 'a webhook event type named "__proto__" (connection PUT)', method: "PUT", path: "/api/v1/webhook-connections/psp", key: (k) => k.a.admin, rawBody: '{"scheme":"stripe","secrets":["whsec_0123456789abcdef0123"],"correlation":{"path":"data.id"},"outcomes":{"__proto__":"succeeded"}}', headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-request", errorPath: "outcomes.__proto__" } },
  { name: "a side effect name with a space (side-effect PUT)", method: "PUT", path: "/api/v1/operations/op_x/side-effects/bad%20name", key: (k) => k.a.agent, body: { fencingToken: "1", provider: "stripe", state: "intended" }, expected: { status: 400, code: "invalid-request", errorPath: "name" } },
  { name: "empty JSON body (claim)", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-empty", rawBody: "", headers: { "content-type": "application/json" }, expected: { status: 400, code: "invalid-json" } },
  { name: "text/plain body (claim)", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-text", rawBody: JSON.stringify(validClaim), headers: { "content-type": "text/plain" }, expected: { status: 415, code: "unsupported-media-type" } },
  { name: "text/plain body (tool PUT)", method: "PUT", path: "/api/v1/tools/x", key: (k) => k.a.admin, rawBody: "{}", headers: { "content-type": "text/plain" }, expected: { status: 415, code: "unsupported-media-type" } },
  {
    name: "a gzip-encoded JSON body (claim)",
    method: "POST",
    path: claimPath,
    key: (k) => k.a.agent,
    idempotencyKey: "k-gzip",
    rawBody: gzipSync(JSON.stringify(validClaim)),
    headers: { "content-type": "application/json", "content-encoding": "gzip" },
    expected: { status: 415, code: "unsupported-media-type" },
  },
  { name: "no content type at all (claim)", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-noct", rawBody: JSON.stringify(validClaim), expected: { status: 415, code: "unsupported-media-type" } },
  { name: "claim body over 64 KiB", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-big", body: { tool: TOOL, args: { pad: "x".repeat(64 * KiB) } }, expected: { status: 413, code: "payload-too-large" } },
  { name: "tool PUT body over 64 KiB", ...toolPut("x", { description: "x".repeat(64 * KiB) }), expected: { status: 413, code: "payload-too-large" } },
  { name: "complete body over 256 KiB", method: "POST", path: "/api/v1/operations/op_x/complete", key: (k) => k.a.agent, body: { fencingToken: "1", outcome: "succeeded", result: { body: "x".repeat(256 * KiB) } }, expected: { status: 413, code: "payload-too-large" } },

  // The tool name in the path.
  { name: "tool name with a space and capitals (PUT)", ...toolPut("Bad%20Name", {}), expected: { status: 400, code: "invalid-request", errorPath: "name" } },
  { name: "tool name starting with a digit (PUT)", ...toolPut("1tool", {}), expected: { status: 400, code: "invalid-request", errorPath: "name" } },
  { name: "tool name of 101 characters (PUT)", ...toolPut(`t${"x".repeat(100)}`, {}), expected: { status: 400, code: "invalid-request", errorPath: "name" } },
  { name: "tool name with capitals (GET)", method: "GET", path: "/api/v1/tools/Bad%20Name", key: (k) => k.a.admin, expected: { status: 400, code: "invalid-request", errorPath: "name" } },

  // Policies and annotations out of range: 400 naming the field.
  ...policyCases.map(
    (p): BadRequest => ({ name: `tool with ${p.name}`, ...toolPut("x", p.body), expected: { status: 400, code: "invalid-request", errorPath: p.path, errorMessage: p.message } }),
  ),
  { name: "tool body that is an array", ...toolPut("x", []), expected: { status: 400, code: "invalid-request" } },

  // Idempotency-Key: required, 1..255 characters in 0x21..0x7E.
  { name: "claim without Idempotency-Key", method: "POST", path: claimPath, key: (k) => k.a.agent, body: validClaim, expected: { status: 400, code: "idempotency-key-missing" } },
  { name: "Idempotency-Key with a space", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "has space", body: validClaim, expected: { status: 400, code: "idempotency-key-invalid" } },
  { name: "Idempotency-Key of 256 characters", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k".repeat(256), body: validClaim, expected: { status: 400, code: "idempotency-key-invalid" } },
  { name: "Idempotency-Key with a non-ASCII character", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "cl\u00e9", body: validClaim, expected: { status: 400, code: "idempotency-key-invalid" } },
  { name: "Idempotency-Key with a tab", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "a\tb", body: validClaim, expected: { status: 400, code: "idempotency-key-invalid" } },
  { name: "lookup without an idempotencyKey", method: "GET", path: `/api/v1/operations?tool=${TOOL}`, key: (k) => k.a.agent, expected: { status: 400, code: "invalid-request", errorPath: "idempotencyKey" } },

  // Claim bodies.
  { name: "claim with an unknown field", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-unknown-field", body: { ...validClaim, argz: {} }, expected: { status: 400, code: "invalid-request", errorMessage: /argz/ } },
  { name: "claim without tool", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-no-tool", body: { args: {} }, expected: { status: 400, code: "invalid-request", errorPath: "tool" } },
  { name: "claim with args as an array", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-args-array", body: { tool: TOOL, args: [1, 2] }, expected: { status: 400, code: "invalid-request", errorPath: "args" } },
  { name: "claim with args as a string", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-args-string", body: { tool: TOOL, args: "title=x" }, expected: { status: 400, code: "invalid-request", errorPath: "args" } },
  { name: "claim with args null", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-args-null", body: { tool: TOOL, args: null }, expected: { status: 400, code: "invalid-request", errorPath: "args" } },
  { name: "claim with a malformed tool name", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-bad-tool", body: { tool: "Tickets Create", args: {} }, expected: { status: 400, code: "invalid-request", errorPath: "tool" } },
  { name: "claim body that is a JSON array", method: "POST", path: claimPath, key: (k) => k.a.agent, idempotencyKey: "k-array", body: [validClaim], expected: { status: 400, code: "invalid-request" } },
];

describe("bad inputs are refused with the documented problem and store nothing", () => {
  it.each(cases)("$name → $expected.status $expected.code", async (c) => {
    const before = await storedCounts();

    const res = await send(c);

    expectProblem(res, c.expected);
    if (c.expected.status === 401) expect(res.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expect(await storedCounts()).toEqual(before);
  });

  it("refuses a body that is not UTF-8, on the claim, the complete and a tool PUT", async () => {
    // Bytes 0xFF and 0xFE both used to decode to U+FFFD: two different args, one fingerprint.
    const before = await storedCounts();
    const invalid = (text: string) => Buffer.from(text.replace("@", "\xff"), "latin1");
    const requests: [string, string, string, Buffer][] = [
      ["POST", claimPath, keys.a.agent, invalid(`{"tool":"${TOOL}","args":{"name":"@"}}`)],
      ["POST", "/api/v1/operations/op_x/complete", keys.a.agent, invalid('{"fencingToken":"1","outcome":"succeeded","result":{"body":"@"}}')],
      ["PUT", "/api/v1/tools/x", keys.a.admin, invalid('{"description":"@"}')],
    ];
    for (const [method, path, key, rawBody] of requests) {
      const res = await call(app.baseUrl, method, path, { key, rawBody, idempotencyKey: "k-utf8", headers: { "content-type": "application/json" } });
      expectProblem(res, { status: 400, code: "invalid-json" });
      expect(res.body.detail).toMatch(/not valid UTF-8/);
    }
    expect(await storedCounts()).toEqual(before);
  });

  it("malformed JSON is answered with where it breaks, never with a quote of the body (a secret sent with a quote missing)", async () => {
    const before = await storedCounts();
    const requests: [string, string, string, string, RegExp][] = [
      ["PUT", "/api/v1/webhook-connections/pay", keys.a.admin, '{"scheme":"standard-webhooks","secrets":[whsec_TOPSECRETvalue]}', /not valid JSON: it is not JSON text\.$/],
      ["POST", claimPath, keys.a.agent, '{"tool":"x","args":{"card":"4242TOPSECRETvalue" "cvc":1}}', /not valid JSON: it breaks at character \d+\.$/],
      ["POST", claimPath, keys.a.agent, '{"tool":"x","args":{"card":"4242TOPSECRETvalue"', /not valid JSON: it (ends before the JSON does|breaks at character \d+)\.$/],
    ];
    for (const [method, path, key, rawBody, detail] of requests) {
      const res = await call(app.baseUrl, method, path, { key, rawBody, idempotencyKey: "k-quote", headers: { "content-type": "application/json" } });
      expectProblem(res, { status: 400, code: "invalid-json" });
      expect(res.body.detail).toMatch(detail);
      expect(res.text).not.toMatch(/TOPSECRET/);
    }
    expect(await storedCounts()).toEqual(before);
  });

  it("refuses a claim body over 64 KiB sent chunked, without a Content-Length", async () => {
    // The limit is enforced while streaming, not only from the declared length.
    const before = await storedCounts();
    const bytes = new TextEncoder().encode(JSON.stringify({ tool: TOOL, args: { pad: "y".repeat(80 * KiB) } }));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 8 * KiB) controller.enqueue(bytes.slice(i, i + 8 * KiB));
        controller.close();
      },
    });

    const res = await fetch(`${app.baseUrl}${claimPath}`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys.a.agent}`, "idempotency-key": "k-chunked", "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit & { duplex: "half" });

    expect(res.status).toBe(413);
    expect(res.headers.get("connection")).toBe("close");
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { code: string }).code).toBe("payload-too-large");
    expect(await storedCounts()).toEqual(before);
  });

  it("refuses a revoked key on every route at once, even right after it was used (key lookup cached)", async () => {
    // The hot path caches key lookups per instance; revocation must still win everywhere:
    // the claim re-checks in SQL, and the other routes are documented to always ask the database.
    const admin = await createApiKey({ db: app.db, tenantId: keys.a.tenantId, input: { principal: "soon-revoked-admin", role: "admin" }, actor: "test" });
    const warm = await call(app.baseUrl, "POST", claimPath, { key: admin.secret, idempotencyKey: "warm-up", body: { tool: "no.such.tool" } });
    expect(warm.status).toBe(404);
    await revokeApiKey({ db: app.db, id: admin.key.id, actor: "test" });
    const before = await storedCounts();

    const replies = {
      claim: await call(app.baseUrl, "POST", claimPath, { key: admin.secret, idempotencyKey: "after-revoke", body: validClaim }),
      readOperation: await call(app.baseUrl, "GET", "/api/v1/operations/op_missing", { key: admin.secret }),
      listTools: await call(app.baseUrl, "GET", "/api/v1/tools", { key: admin.secret }),
      replaceTool: await call(app.baseUrl, "PUT", `/api/v1/tools/${TOOL}`, { key: admin.secret, body: { description: "written with a revoked key" } }),
    };

    expect(Object.fromEntries(Object.entries(replies).map(([route, r]) => [route, `${r.status} ${String(r.body?.code)}`]))).toEqual({
      claim: "401 unauthorized",
      readOperation: "401 unauthorized",
      listTools: "401 unauthorized",
      replaceTool: "401 unauthorized",
    });
    expect(await storedCounts()).toEqual(before);
    const tool = await app.db.tool.findUniqueOrThrow({ where: { tenantId_name: { tenantId: keys.a.tenantId, name: TOOL } } });
    expect(tool.description).toBe("");
  });

  it("accepts an Idempotency-Key of exactly 255 printable characters (the upper bound)", async () => {
    const key = `${"!~".repeat(127)}Z`;
    expect(key).toHaveLength(255);

    const res = await call(app.baseUrl, "POST", claimPath, { key: keys.a.agent, idempotencyKey: key, body: validClaim });

    expect(res.status).toBe(201);
    expect(await app.db.operation.count({ where: { tenantId: keys.a.tenantId, tool: TOOL } })).toBe(1);
  });
});

describe("a tool keeps its data when a replacement is invalid", () => {
  it("PUT valid, then PUT invalid: the stored tool and its audit trail are unchanged", async () => {
    const name = "keep.me";
    const created = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, {
      key: keys.a.admin,
      body: { description: "original", policy: { leaseSeconds: 42, maxAttempts: 7, takeover: "deduplicated" } },
    });
    expect(created.status).toBe(201);
    const storedBefore = await app.db.tool.findUniqueOrThrow({ where: { tenantId_name: { tenantId: keys.a.tenantId, name } } });
    const before = await storedCounts();

    const invalid = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, {
      key: keys.a.admin,
      body: { description: "replacement", policy: { leaseSeconds: 0, maxAttempts: 1 } },
    });

    expectProblem(invalid, { status: 400, code: "invalid-request", errorPath: "policy.leaseSeconds" });
    expect(await storedCounts()).toEqual(before);
    const storedAfter = await app.db.tool.findUniqueOrThrow({ where: { tenantId_name: { tenantId: keys.a.tenantId, name } } });
    expect(storedAfter).toEqual(storedBefore);
    const read = await call(app.baseUrl, "GET", `/api/v1/tools/${name}`, { key: keys.a.admin });
    expect(read.body).toEqual(created.body);
    expect(read.body.policy).toMatchObject({ leaseSeconds: 42, maxAttempts: 7, takeover: "deduplicated" });
  });
});
