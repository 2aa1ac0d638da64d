import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { call, claim } from "../support/http";
import { expectProblem } from "../support/protocol";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// Tools are the admin's declaration of how each agent tool call is made safe: the API fills
// in every default, PUT replaces the whole definition, every change is audited, and a tenant
// only ever sees its own tools.

const MCP_ANNOTATION_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
const POLICY_DEFAULTS = {
  leaseSeconds: 30,
  maxAttempts: 3,
  backoff: { baseMs: 1000, capMs: 60000 },
  takeover: "never",
  approval: "none",
  approvalTtlSeconds: 86400,
  resultRetentionHours: 24,
  probe: null,
};
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let app: TestApp;
let a: TenantKeys;
let b: TenantKeys;
let aAdminKeyId: string;

beforeAll(async () => {
  app = await startTestApp();
  a = await seedTenant(app.db, "acme");
  b = await seedTenant(app.db, "globex");
  aAdminKeyId = (await app.db.apiKey.findFirstOrThrow({ where: { tenantId: a.tenantId, principal: "acme-admin" } })).id;
});

afterAll(async () => {
  await app?.stop();
});

const put = (key: string, name: string, body: unknown) => call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key, body });
const get = (key: string, path: string) => call(app.baseUrl, "GET", path, { key });
const auditOf = (tenantId: string, name: string) =>
  app.db.auditEvent.findMany({ where: { tenantId, targetType: "tool", targetId: name }, orderBy: { id: "asc" } });

describe("PUT /api/v1/tools/{name} creates", () => {
  it("answers 201 with a Location and every default filled in (annotations as MCP's)", async () => {
    const res = await put(a.admin, "tickets.create", {});

    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe("/api/v1/tools/tickets.create");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      name: "tickets.create",
      description: "",
      annotations: MCP_ANNOTATION_DEFAULTS,
      policy: POLICY_DEFAULTS,
      createdAt: expect.stringMatching(RFC3339_UTC),
      updatedAt: expect.stringMatching(RFC3339_UTC),
    });
    const stored = await app.db.tool.findUniqueOrThrow({ where: { tenantId_name: { tenantId: a.tenantId, name: "tickets.create" } } });
    expect(stored).toMatchObject({
      description: "",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
      leaseSeconds: 30,
      maxAttempts: 3,
      backoffBaseMs: 1000,
      backoffCapMs: 60000,
      takeover: "never",
      approval: "none",
      approvalTtlSeconds: 86400,
      resultRetentionHours: 24,
    });
  });

  it("fills in the defaults of whatever part of a nested object is left out", async () => {
    const res = await put(a.admin, "partial.policy", {
      annotations: { readOnlyHint: true },
      policy: { backoff: { baseMs: 250 }, takeover: "deduplicated" },
    });

    expect(res.status).toBe(201);
    expect(res.body.annotations).toEqual({ ...MCP_ANNOTATION_DEFAULTS, readOnlyHint: true });
    expect(res.body.policy).toEqual({ ...POLICY_DEFAULTS, backoff: { baseMs: 250, capMs: 60000 }, takeover: "deduplicated" });
  });

  it("stores and returns a full definition exactly as given", async () => {
    const definition = {
      description: "Refund a charge",
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      policy: {
        leaseSeconds: 120,
        maxAttempts: 5,
        backoff: { baseMs: 2000, capMs: 30000 },
        takeover: "deduplicated",
        approval: "required",
        approvalTtlSeconds: 3600,
        resultRetentionHours: 72,
      },
    };

    const res = await put(a.admin, "payments.refund", definition);

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "payments.refund", ...definition });
  });

  it.each([
    { name: "leaseSeconds 1", policy: { leaseSeconds: 1 } },
    { name: "leaseSeconds 3600", policy: { leaseSeconds: 3600 } },
    { name: "maxAttempts 1", policy: { maxAttempts: 1 } },
    { name: "maxAttempts 20", policy: { maxAttempts: 20 } },
    { name: "resultRetentionHours 1", policy: { resultRetentionHours: 1 } },
    { name: "resultRetentionHours 2160", policy: { resultRetentionHours: 2160 } },
    { name: "approvalTtlSeconds 60", policy: { approvalTtlSeconds: 60 } },
    { name: "capMs equal to baseMs", policy: { backoff: { baseMs: 5000, capMs: 5000 } } },
  ])("accepts the boundary value $name", async ({ policy }) => {
    const res = await put(a.admin, "boundary.tool", { policy });

    expect([200, 201]).toContain(res.status);
    expect(res.body.policy).toMatchObject(policy);
  });

  it.each(["a", "x".repeat(100), "a0_.-z", "crm.contacts_v2-beta"])("accepts the tool name %s", async (name) => {
    const res = await put(a.admin, name, {});

    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name);
  });
});

describe("PUT /api/v1/tools/{name} replaces", () => {
  it("answers 200 with the new definition; what the new body leaves out goes back to its default", async () => {
    // (An approval gate is the exception: an API key cannot lift it by leaving it out, below.)
    const first = await put(a.admin, "mail.send", { description: "v1", policy: { leaseSeconds: 42, takeover: "deduplicated" } });
    expect(first.status).toBe(201);

    const second = await put(a.admin, "mail.send", { description: "v2", policy: { maxAttempts: 9 } });

    expect(second.status).toBe(200);
    // PUT is a replacement, not a merge: leaseSeconds and takeover are back to their defaults.
    expect(second.body).toEqual({
      name: "mail.send",
      description: "v2",
      annotations: MCP_ANNOTATION_DEFAULTS,
      policy: { ...POLICY_DEFAULTS, maxAttempts: 9 },
      createdAt: first.body.createdAt,
      updatedAt: expect.stringMatching(RFC3339_UTC),
    });
    expect(Date.parse(second.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.body.updatedAt));
    expect(await app.db.tool.count({ where: { tenantId: a.tenantId, name: "mail.send" } })).toBe(1);
    const read = await get(a.admin, "/api/v1/tools/mail.send");
    expect(read.body).toEqual(second.body);
  });

  it("writes one audit event per PUT: tool.created, then tool.replaced with before and after", async () => {
    const created = await put(a.admin, "audited.tool", { description: "before", policy: { leaseSeconds: 10 } });
    const replaced = await put(a.admin, "audited.tool", { description: "after", policy: { leaseSeconds: 20 } });
    expect([created.status, replaced.status]).toEqual([201, 200]);

    const events = await auditOf(a.tenantId, "audited.tool");

    expect(events.map((e) => e.action)).toEqual(["tool.created", "tool.replaced"]);
    const [createdEvent, replacedEvent] = events;
    expect(createdEvent).toMatchObject({ actor: `api-key:${aAdminKeyId}`, targetType: "tool", targetId: "audited.tool", before: null, after: created.body });
    expect(replacedEvent).toMatchObject({ actor: `api-key:${aAdminKeyId}`, before: created.body, after: replaced.body });
  });
});

describe("GET /api/v1/tools and /api/v1/tools/{name}", () => {
  it("returns one tool exactly as the PUT did", async () => {
    const created = await put(a.admin, "crm.lookup", { description: "Look a contact up", annotations: { readOnlyHint: true } });

    const res = await get(a.admin, "/api/v1/tools/crm.lookup");

    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it("answers 404 tool-not-found for a name never registered", async () => {
    const res = await get(a.admin, "/api/v1/tools/never.registered");

    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.code).toBe("tool-not-found");
  });

  it("lists the tenant's tools sorted by name, each with its full definition", async () => {
    await put(a.admin, "zeta.last", {});
    await put(a.admin, "alpha.first", {});

    const res = await get(a.admin, "/api/v1/tools");

    expect(res.status).toBe(200);
    const names: string[] = res.body.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["alpha.first", "zeta.last", "tickets.create", "mail.send"]));
    const stored = await app.db.tool.findMany({ where: { tenantId: a.tenantId }, select: { name: true } });
    expect(names).toHaveLength(stored.length);
    for (const tool of res.body.tools) expect(Object.keys(tool).sort()).toEqual(["annotations", "createdAt", "description", "name", "policy", "updatedAt"]);
  });
});

describe("tenant isolation", () => {
  it("another tenant's admin cannot see a tool: 404 by name, absent from the list", async () => {
    await put(a.admin, "acme.private", { description: "acme only" });

    const one = await get(b.admin, "/api/v1/tools/acme.private");
    const list = await get(b.admin, "/api/v1/tools");

    expect(one.status).toBe(404);
    expect(one.body.code).toBe("tool-not-found");
    expect(list.status).toBe(200);
    expect(list.body.tools.map((t: { name: string }) => t.name)).not.toContain("acme.private");
  });

  it("the same name in another tenant is another tool: creating it there leaves ours untouched", async () => {
    const ours = await put(a.admin, "shared.name", { description: "acme's", policy: { leaseSeconds: 11 } });

    const theirs = await put(b.admin, "shared.name", { description: "globex's", policy: { leaseSeconds: 99 } });

    expect(theirs.status).toBe(201);
    expect((await get(a.admin, "/api/v1/tools/shared.name")).body).toEqual(ours.body);
    expect((await get(b.admin, "/api/v1/tools/shared.name")).body).toMatchObject({ description: "globex's", policy: { leaseSeconds: 99 } });
    expect(await auditOf(a.tenantId, "shared.name")).toHaveLength(1);
    expect(await auditOf(b.tenantId, "shared.name")).toHaveLength(1);
  });
});

describe("an approval gate", () => {
  // Review, 2026-12-02: an admin key that also claims was refused its own approval, then PUT the
  // tool with "approval": "none" and claimed under a fresh key: the tool ran with no second party.
  it("cannot be lifted by an API key (403, unchanged, not audited); kept, or raised, it can; a console admin may lift it", async () => {
    expect((await put(a.admin, "gated.refund", { policy: { approval: "required" } })).status).toBe(201);
    const audited = (await auditOf(a.tenantId, "gated.refund")).length;

    expectProblem(await put(a.admin, "gated.refund", { policy: { approval: "none" } }), 403, "forbidden");
    // A whole definition that leaves approval out means "none" too.
    expectProblem(await put(a.admin, "gated.refund", { policy: { leaseSeconds: 45 } }), 403, "forbidden");
    expect((await get(a.admin, "/api/v1/tools/gated.refund")).body.policy).toMatchObject({ approval: "required", leaseSeconds: 30 });
    expect(await auditOf(a.tenantId, "gated.refund")).toHaveLength(audited);

    expect((await put(a.admin, "gated.refund", { policy: { approval: "required", leaseSeconds: 45 } })).status).toBe(200);
    expect((await put(a.admin, "gated.open", {})).status).toBe(201);
    expect((await put(a.admin, "gated.open", { policy: { approval: "required" } })).status).toBe(200);
  });
});

describe("an admin key limited to some tools", () => {
  it("reads, lists and defines only those: the others are 404 tool-not-found and stay as they were; nor can it resolve their operations", async () => {
    expect((await put(a.admin, "limited.mine", {})).status).toBe(201);
    expect((await put(a.admin, "limited.other", { policy: { approval: "required" } })).status).toBe(201);
    const limited = await createApiKey({ db: app.db, tenantId: a.tenantId, input: { principal: "acme-limited-admin", role: "admin", tools: ["limited.mine"] }, actor: "test" });

    expect((await get(limited.secret, "/api/v1/tools/limited.mine")).status).toBe(200);
    expectProblem(await get(limited.secret, "/api/v1/tools/limited.other"), 404, "tool-not-found");
    expectProblem(await put(limited.secret, "limited.other", { policy: { approval: "none" } }), 404, "tool-not-found");
    expect((await get(a.admin, "/api/v1/tools/limited.other")).body.policy).toMatchObject({ approval: "required" });
    expect((await get(limited.secret, "/api/v1/tools")).body.tools.map((t: { name: string }) => t.name)).toEqual(["limited.mine"]);

    // An unknown operation of the other tool (its lease ran out): 404 for the limited key, resolved by the full one.
    expect((await put(a.admin, "limited.third", { policy: { leaseSeconds: 1 } })).status).toBe(201);
    const c = await claim(app.baseUrl, a.agent, "limited-idem-1", { tool: "limited.third", args: {} });
    expect(c.status, c.text).toBe(201);
    await app.db.$executeRaw`UPDATE operation SET state = 'unknown', lease_expires_at = NULL WHERE id = ${c.body.operationId}`;
    const resolve = (key: string) =>
      call(app.baseUrl, "POST", `/api/v1/operations/${c.body.operationId}/resolve`, { key, body: { outcome: "failed", reason: "checked the provider" } });
    expectProblem(await resolve(limited.secret), 404, "operation-not-found");
    expect((await app.db.operation.findUniqueOrThrow({ where: { id: c.body.operationId } })).state).toBe("unknown");
    expect((await resolve(a.admin)).status).toBe(200);
  });

  // Security review: a webhook connection of its own settled another tool's operation, and an
  // event subscription received every tool's results. Both act tenant-wide, so a key with a tool
  // list may not manage them (403), and nothing is stored.
  it("may not manage webhook connections or event subscriptions, which act on every tool's operations (403, nothing stored)", async () => {
    const limited = await createApiKey({ db: app.db, tenantId: a.tenantId, input: { principal: "acme-limited-admin-2", role: "admin", tools: ["limited.mine"] }, actor: "test" });
    const connection = { scheme: "standard-webhooks", secrets: [`whsec_${Buffer.alloc(32, 3).toString("base64")}`], correlation: { path: "data.op" }, outcomes: { ok: "failed" } };
    const subscription = { url: "https://receiver.example/hook", events: ["operation.succeeded"] };
    const attempts = [
      call(app.baseUrl, "PUT", "/api/v1/webhook-connections/limited-conn", { key: limited.secret, body: connection }),
      call(app.baseUrl, "GET", "/api/v1/webhook-connections/limited-conn", { key: limited.secret }),
      call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/limited-sub", { key: limited.secret, body: subscription }),
      call(app.baseUrl, "GET", "/api/v1/event-subscriptions/limited-sub", { key: limited.secret }),
      call(app.baseUrl, "DELETE", "/api/v1/event-subscriptions/limited-sub", { key: limited.secret }),
      call(app.baseUrl, "GET", "/api/v1/event-subscriptions", { key: limited.secret }),
    ];
    for (const res of await Promise.all(attempts)) {
      expectProblem(res, 403, "forbidden");
      expect(res.body.detail).toContain("admin key without a tool list");
    }
    expect(await app.db.webhookConnection.count({ where: { tenantId: a.tenantId, name: "limited-conn" } })).toBe(0);
    expect(await app.db.eventSubscription.count({ where: { tenantId: a.tenantId, name: "limited-sub" } })).toBe(0);
    // The same requests with the tenant's unlimited admin key work.
    expect((await call(app.baseUrl, "PUT", "/api/v1/webhook-connections/limited-conn", { key: a.admin, body: connection })).status).toBe(201);
    expect((await call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/limited-sub", { key: a.admin, body: subscription })).status).toBe(201);
    expectProblem(await call(app.baseUrl, "GET", "/api/v1/webhook-connections/limited-conn", { key: limited.secret }), 403, "forbidden");
  });
});
