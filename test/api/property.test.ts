import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { problemCodes, type ProblemCode } from "@/lib/http/problem";
import { call, type Reply } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// Whatever an agent (or an attacker) sends to POST /api/v1/operations, the server answers
// deliberately: never a 5xx, and a request refused by validation (400/401/403/404/413/415)
// leaves no trace in operation, attempt, approval or audit_event — the contract's
// "validation failures store nothing".
let app: TestApp;
let tenant: TenantKeys;
let keys: Record<AuthChoice, string | undefined>;
const tool = "prop.tickets-create";
const otherTool = "prop.other";
const validationStatuses = new Set([400, 401, 403, 404, 413, 415]);
const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

type AuthChoice = "agent" | "admin" | "approver" | "limited" | "revoked" | "none" | "garbage";

beforeAll(async () => {
  app = await startTestApp();
  tenant = await seedTenant(app.db, "prop");
  for (const name of [tool, otherTool]) {
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: tenant.admin, body: {} })).status).toBe(201);
  }
  const limited = await createApiKey({ db: app.db, tenantId: tenant.tenantId, input: { principal: "prop-limited", role: "agent", tools: [otherTool] }, actor: "test" });
  const revoked = await createApiKey({ db: app.db, tenantId: tenant.tenantId, input: { principal: "prop-revoked", role: "agent" }, actor: "test" });
  await revokeApiKey({ db: app.db, id: revoked.key.id, actor: "test" });
  keys = {
    agent: tenant.agent,
    admin: tenant.admin,
    approver: tenant.approver,
    limited: limited.secret,
    revoked: revoked.secret,
    none: undefined,
    garbage: "tg_this-key-was-never-issued",
  };
});

afterAll(async () => {
  await app?.stop();
});

type Stored = { operations: number; attempts: number; approvals: number; audits: number };

async function stored(): Promise<Stored> {
  const rows = await app.db.$queryRaw<Stored[]>`
    SELECT (SELECT count(*) FROM operation)::int AS operations, (SELECT count(*) FROM attempt)::int AS attempts,
           (SELECT count(*) FROM approval)::int AS approvals, (SELECT count(*) FROM audit_event)::int AS audits`;
  return rows[0]!;
}

// fetch refuses some header values (NUL, CR, LF, characters above U+00FF) before anything
// is sent; such a sample says nothing about the server, so it is skipped.
async function send(request: () => Promise<Reply>): Promise<Reply | "refused-by-client"> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof TypeError && /header|ByteString/i.test(`${error.message} ${String(error.cause)}`)) return "refused-by-client";
    throw error;
  }
}

// The invariants every answer must hold, whatever was sent.
function expectDeliberateAnswer(reply: Reply, before: Stored, after: Stored): void {
  expect(reply.status, `5xx for a client's request: ${reply.text}`).toBeLessThan(500);
  if (reply.status >= 400) {
    expect(reply.headers.get("content-type")).toBe("application/problem+json");
    const code = reply.body?.code as ProblemCode;
    expect(Object.keys(problemCodes)).toContain(code);
    expect(problemCodes[code].status).toBe(reply.status);
    expect(reply.body.status).toBe(reply.status);
  }
  if (validationStatuses.has(reply.status)) expect(after, `stored something for a ${reply.status} ${reply.body?.code}`).toEqual(before);
}

// Values for the Idempotency-Key header: printable ASCII of every length around the 255
// limit, every byte 0x00-0xFF, and arbitrary Unicode.
const headerValue = fc.oneof(
  fc.string({ minLength: 0, maxLength: 300 }),
  fc.string({ unit: "binary-ascii", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("!".repeat(255), "~".repeat(256), " ", "\t", "a b", " padded ", "ключ", "caf\u00e9", "\u007f"),
);

// What fetch actually puts on the wire: it strips leading and trailing HTTP whitespace.
const onTheWire = (value: string) => value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");

describe("random Idempotency-Key headers", () => {
  it("never yield a 5xx, and a refused key stores nothing", async () => {
    let reachedServer = 0;
    await fc.assert(
      fc.asyncProperty(headerValue, async (value) => {
        // setup
        const before = await stored();
        // action
        const reply = await send(() => call(app.baseUrl, "POST", "/api/v1/operations", { key: tenant.agent, idempotencyKey: value, body: { tool, args: { n: 1 } } }));
        if (reply === "refused-by-client") return;
        reachedServer += 1;
        const after = await stored();
        // assertion
        expectDeliberateAnswer(reply, before, after);
        const sent = onTheWire(value);
        if (sent === "") {
          expect(reply.body?.code).toBe("idempotency-key-missing");
        } else if (idempotencyKeyPattern.test(sent)) {
          // A value drawn twice is the same intent retried while the first still holds its lease.
          expect([201, 409]).toContain(reply.status);
          if (reply.status === 409) expect(reply.body.code).toBe("operation-in-progress");
        } else {
          expect(reply.body?.code).toBe("idempotency-key-invalid");
        }
      }),
      { numRuns: 75 },
    );
    // The property is not vacuous: most samples did reach the server.
    expect(reachedServer).toBeGreaterThan(40);
  });
});

// Bodies: arbitrary JSON, arbitrary text, objects shaped like a claim with wrong types or
// extra fields, oversized ones, and genuinely valid claims with arbitrary args.
const jsonish = fc.jsonValue({ maxDepth: 4 });
const claimShaped = fc.record(
  {
    tool: fc.oneof(fc.constant(tool), fc.constant(otherTool), fc.constant("prop.missing"), fc.string({ maxLength: 120 }), fc.integer(), fc.constant(null), fc.array(fc.string())),
    args: fc.oneof(fc.dictionary(fc.string(), jsonish, { maxKeys: 5 }), jsonish),
    workflowId: fc.oneof(fc.string({ maxLength: 220 }), fc.integer(), fc.constant(null)),
    traceId: fc.oneof(fc.string({ maxLength: 220 }), fc.boolean()),
    extra: jsonish,
  },
  { requiredKeys: [] },
);
// Valid claims with hostile but legal args: any Unicode, NUL and control characters in keys
// and values, "__proto__" keys, huge and negative-zero numbers, deep nesting.
const validArgs = fc.dictionary(
  fc.oneof(fc.string({ unit: "binary", maxLength: 10 }), fc.constantFrom("__proto__", "constructor", "", "a.b", "[0]")),
  fc.jsonValue({ maxDepth: 3, stringUnit: "binary-ascii" }),
  { maxKeys: 6 },
);
const oversized = fc.integer({ min: 64 * 1024 - 64, max: 64 * 1024 + 64 }).map((n) => ({ tool, args: { pad: "x".repeat(n) } }));

type BodySample = { body: unknown; raw?: string; valid: boolean };
const bodySample: fc.Arbitrary<BodySample> = fc.oneof(
  jsonish.map((body) => ({ body, valid: false })),
  fc.string({ unit: "binary", maxLength: 200 }).map((raw) => ({ body: undefined, raw, valid: false })),
  claimShaped.map((body) => ({ body, valid: false })),
  oversized.map((body) => ({ body, valid: false })),
  fc.record({ args: validArgs, workflowId: fc.option(fc.string({ minLength: 1, maxLength: 200 }), { nil: undefined }) }).map(({ args, workflowId }) => ({
    body: workflowId === undefined ? { tool, args } : { tool, args, workflowId },
    valid: true,
  })),
);
const contentType = fc.constantFrom("application/json", "application/json; charset=utf-8", "application/vnd.tollgate+json", "text/plain", "");
const auth = fc.constantFrom<AuthChoice>("agent", "agent", "agent", "admin", "approver", "limited", "revoked", "none", "garbage");

describe("random claim bodies", () => {
  it("never yield a 5xx; refused ones store nothing, valid ones store exactly one operation", async () => {
    let sample = 0;
    await fc.assert(
      fc.asyncProperty(bodySample, contentType, auth, async ({ body, raw, valid }, type, who) => {
        // setup: a fresh key per sample, so every answer is about this body alone
        sample += 1;
        const idempotencyKey = `prop-body-${sample}-${Math.random().toString(36).slice(2)}`;
        const before = await stored();
        const rawBody = raw ?? (body === undefined ? undefined : JSON.stringify(body));
        // action
        const reply = await call(app.baseUrl, "POST", "/api/v1/operations", {
          key: keys[who],
          idempotencyKey,
          rawBody,
          headers: type ? { "content-type": type } : {},
        });
        const after = await stored();
        // assertion
        expectDeliberateAnswer(reply, before, after);
        expect([201, ...validationStatuses]).toContain(reply.status);
        const mayClaim = (who === "agent" || who === "admin") && type !== "text/plain" && type !== "";
        if (valid && mayClaim) {
          expect(reply.status, reply.text).toBe(201);
        }
        if (reply.status === 201) {
          expect(after).toMatchObject({ operations: before.operations + 1, attempts: before.attempts + 1 });
        }
      }),
      { numRuns: 75 },
    );
  });
});
