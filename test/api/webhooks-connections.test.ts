import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decryptSecret } from "@/lib/crypto/secret-box";
import { call, type Reply } from "../support/http";
import { seedTenant, startTestApp, TEST_SECRET, type TenantKeys, type TestApp } from "../support/test-app";
import { deliver, newStandardSecret, newStripeSecret, putConnection, signStandard, ticketEvent } from "../support/webhooks";

// Issue 5, "Connections": PUT/GET /api/v1/webhook-connections/{name} (admin). Secrets are
// encrypted at rest with TOLLGATE_SECRET_KEY and never returned after creation; the response
// gives the unguessable endpoint URL. Every answer here is also validated against the schema
// /api/v1/openapi.json declares for it.

let app: TestApp;
let acme: TenantKeys;
let globex: TenantKeys;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document is walked by arbitrary JSON pointers
let doc: any;
let ajv: Ajv2020;
const DOC_ID = "https://tollgate.test/api/v1/openapi.json";

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
  doc = (await call(app.baseUrl, "GET", "/api/v1/openapi.json")).body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ ...doc, $id: DOC_ID });
});
afterAll(async () => {
  await app?.stop();
});

const validators = new Map<string, ValidateFunction>();
const pointerPart = (s: string) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1"));

// The real answer has a documented status and media type, and the documented schema accepts its body.
function expectDocumented(reply: Reply, pathTemplate: string, method: string, status: number): void {
  expect(reply.status, reply.text).toBe(status);
  const mediaType = (reply.headers.get("content-type") ?? "").split(";")[0]!.trim();
  const spec = doc.paths?.[pathTemplate]?.[method]?.responses?.[String(status)];
  expect(spec, `${method} ${pathTemplate} documents ${status}`).toBeDefined();
  expect(Object.keys(spec.content ?? {})).toContain(mediaType);
  const ref = `${DOC_ID}#/${["paths", pathTemplate, method, "responses", String(status), "content", mediaType, "schema"].map(pointerPart).join("/")}`;
  let validate = validators.get(ref);
  if (!validate) validators.set(ref, (validate = ajv.compile({ $ref: ref })));
  validate(reply.body);
  expect(validate.errors ?? [], reply.text).toEqual([]);
  if (status >= 400) expect(doc.components.schemas.Problem.properties.code.enum).toContain(reply.body.code);
}

const CONNECTION = "/api/v1/webhook-connections/{name}";
const INGEST = "/api/v1/webhooks/{connectionId}";
const stored = (tenantId: string, name: string) => app.db.webhookConnection.findUnique({ where: { tenantId_name: { tenantId, name } } });
const audit = (name: string) => app.db.auditEvent.findMany({ where: { targetType: "webhook_connection", targetId: name }, orderBy: { id: "asc" } });

describe("creating and reading a connection", () => {
  const secret = newStandardSecret();

  it("creates one (201): defaults filled in, endpoint URL given, the secret neither returned nor stored in clear", async () => {
    const res = await putConnection(app.baseUrl, acme.admin, "tickets", { scheme: "standard-webhooks", secrets: [secret] });

    expectDocumented(res, CONNECTION, "put", 201);
    expect(res.headers.get("location")).toBe("/api/v1/webhook-connections/tickets");
    expect(res.body).toMatchObject({
      name: "tickets",
      scheme: "standard-webhooks",
      secretCount: 1,
      toleranceSeconds: 300,
      payloadRetentionDays: 30,
      correlation: { path: "data.metadata.tollgate_operation" },
      outcomes: { "ticket.created": "succeeded", "ticket.rejected": "failed" },
    });
    expect(res.body.connectionId).toMatch(/^whc_[A-Za-z0-9_-]{32}$/);
    expect(res.body.endpointUrl).toBe(`${app.baseUrl}/api/v1/webhooks/${res.body.connectionId}`);
    expect(res.text).not.toContain(secret);
    expect(res.text).not.toContain(secret.slice(6, 30));

    const row = await stored(acme.tenantId, "tickets");
    expect(row?.secretsEncrypted).toHaveLength(1);
    const box = row!.secretsEncrypted[0]!;
    expect(box).not.toContain(secret.slice(6, 30));
    expect(decryptSecret(box, TEST_SECRET)).toBe(secret);
    const audits = await audit("tickets");
    expect(audits.map((a) => a.action)).toEqual(["webhook_connection.created"]);
    expect(audits[0]!.actor).toBe(`api-key:${(await app.db.apiKey.findFirstOrThrow({ where: { principal: "acme-admin" } })).id}`);
    expect(JSON.stringify(audits.map((a) => [a.before, a.after, a.reason]))).not.toContain(secret.slice(6, 30));
  });

  it("reads it back (200) the same, never with secrets; another tenant's admin gets 404", async () => {
    const res = await call(app.baseUrl, "GET", "/api/v1/webhook-connections/tickets", { key: acme.admin });
    expectDocumented(res, CONNECTION, "get", 200);
    expect(res.body.secretCount).toBe(1);
    expect(res.text).not.toContain(secret.slice(6, 30));
    expect(Object.keys(res.body)).not.toContain("secrets");

    const foreign = await call(app.baseUrl, "GET", "/api/v1/webhook-connections/tickets", { key: globex.admin });
    expectDocumented(foreign, CONNECTION, "get", 404);
    expect(foreign.body.code).toBe("webhook-connection-not-found");
  });

  it("replaces it (200) without re-sending secrets: the stored secret stays and still verifies; the audit says what changed", async () => {
    const before = await stored(acme.tenantId, "tickets");
    const res = await putConnection(app.baseUrl, acme.admin, "tickets", {
      scheme: "standard-webhooks",
      toleranceSeconds: 120,
      outcomes: { "ticket.created": "succeeded", "ticket.closed": "succeeded" },
    });

    expectDocumented(res, CONNECTION, "put", 200);
    expect(res.body).toMatchObject({ toleranceSeconds: 120, secretCount: 1, connectionId: before!.id, outcomes: { "ticket.closed": "succeeded" } });
    const after = await stored(acme.tenantId, "tickets");
    expect(after!.secretsEncrypted).toEqual(before!.secretsEncrypted);
    expect(after!.updatedAt.getTime()).toBeGreaterThan(before!.updatedAt.getTime());
    const delivered = await deliver(app.baseUrl, before!.id, signStandard(secret, ticketEvent("ticket.closed", null)));
    expectDocumented(delivered, INGEST, "post", 200);
    expect((await audit("tickets")).map((a) => a.action)).toEqual(["webhook_connection.created", "webhook_connection.replaced"]);
  });

  it("a PUT that changes nothing (the same secrets sent again, outcomes in another order) leaves the version and the audit log alone", async () => {
    const same = { scheme: "standard-webhooks" as const, toleranceSeconds: 120, outcomes: { "ticket.closed": "succeeded", "ticket.created": "succeeded" } as const };
    const before = await stored(acme.tenantId, "tickets");

    const replies = await Promise.all([putConnection(app.baseUrl, acme.admin, "tickets", same), putConnection(app.baseUrl, acme.admin, "tickets", { ...same, secrets: [secret] })]);

    for (const res of replies) expectDocumented(res, CONNECTION, "put", 200);
    expect(replies[0].body).toEqual(replies[1].body);
    const after = await stored(acme.tenantId, "tickets");
    expect(after).toEqual(before);
    expect((await audit("tickets")).map((a) => a.action)).toEqual(["webhook_connection.created", "webhook_connection.replaced"]);
    // Any difference is a change: the same secrets in another count rotate them.
    const rotated = await putConnection(app.baseUrl, acme.admin, "tickets", { ...same, secrets: [secret, newStandardSecret()] });
    expect(rotated.body.secretCount).toBe(2);
    expect((await stored(acme.tenantId, "tickets"))!.updatedAt.getTime()).toBeGreaterThan(after!.updatedAt.getTime());
    const back = await putConnection(app.baseUrl, acme.admin, "tickets", { ...same, secrets: [secret] });
    expect(back.body.secretCount).toBe(1);
  });

  it("documents the ingest's other answers too: duplicate, invalid signature, unknown endpoint", async () => {
    const row = await stored(acme.tenantId, "tickets");
    const signed = signStandard(secret, ticketEvent("ticket.created", null));
    expectDocumented(await deliver(app.baseUrl, row!.id, signed), INGEST, "post", 200);
    const dup = await deliver(app.baseUrl, row!.id, signed);
    expectDocumented(dup, INGEST, "post", 200);
    expect(dup.body.duplicate).toBe(true);
    expectDocumented(await deliver(app.baseUrl, row!.id, signStandard(newStandardSecret(), ticketEvent("x", null))), INGEST, "post", 400);
    expectDocumented(await deliver(app.baseUrl, `whc_${"B".repeat(32)}`, signed), INGEST, "post", 404);
  });
});

describe("refusals store nothing", () => {
  const good = { scheme: "stripe", secrets: [newStripeSecret()], correlation: { path: "data.object.metadata.op" } };
  it.each([
    { what: "no secrets on create", body: { scheme: "stripe", correlation: { path: "a.b" } }, path: "secrets" },
    { what: "an unknown scheme", body: { ...good, scheme: "github" }, path: "scheme" },
    { what: "a Standard Webhooks secret that is not whsec_ + base64", body: { ...good, scheme: "standard-webhooks", secrets: ["whsec_not base64 at all!!"] }, path: "secrets[0]" },
    { what: "a secret too short", body: { ...good, secrets: ["short"] }, path: "secrets[0]" },
    { what: "six secrets", body: { ...good, secrets: Array.from({ length: 6 }, newStripeSecret) }, path: "secrets" },
    { what: "tolerance 0", body: { ...good, toleranceSeconds: 0 }, path: "toleranceSeconds" },
    { what: "a correlation path with spaces", body: { ...good, correlation: { path: "data. object" } }, path: "correlation.path" },
    { what: "an outcome other than succeeded/failed", body: { ...good, outcomes: { "charge.succeeded": "maybe" } }, path: "outcomes.charge.succeeded" },
    { what: "an unknown field", body: { ...good, secret: "x" }, path: "secret" },
  ])("400 for $what", async ({ body, path }) => {
    const res = await call(app.baseUrl, "PUT", "/api/v1/webhook-connections/refused", { key: acme.admin, body });
    expectDocumented(res, CONNECTION, "put", 400);
    expect(res.body.code).toBe("invalid-request");
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await stored(acme.tenantId, "refused")).toBeNull();
    expect(await audit("refused")).toEqual([]);
  });

  it("a scheme change without the new scheme's secrets is refused and the connection is unchanged", async () => {
    const before = await stored(acme.tenantId, "tickets");
    const res = await putConnection(app.baseUrl, acme.admin, "tickets", { scheme: "stripe" });
    expectDocumented(res, CONNECTION, "put", 400);
    expect(await stored(acme.tenantId, "tickets")).toEqual(before);
  });

  it("an agent key is 403, no key is 401, a malformed name is 400", async () => {
    expectDocumented(await putConnection(app.baseUrl, acme.agent, "agents", { scheme: "stripe", secrets: [newStripeSecret()] }), CONNECTION, "put", 403);
    expectDocumented(await call(app.baseUrl, "GET", "/api/v1/webhook-connections/tickets", { key: acme.agent }), CONNECTION, "get", 403);
    expectDocumented(await call(app.baseUrl, "GET", "/api/v1/webhook-connections/tickets"), CONNECTION, "get", 401);
    expectDocumented(await call(app.baseUrl, "GET", "/api/v1/webhook-connections/Bad%20Name", { key: acme.admin }), CONNECTION, "get", 400);
    expect(await stored(acme.tenantId, "agents")).toBeNull();
  });

  it("the same name in two tenants is two connections with two endpoints", async () => {
    const a = await call(app.baseUrl, "GET", "/api/v1/webhook-connections/tickets", { key: acme.admin });
    const g = await putConnection(app.baseUrl, globex.admin, "tickets", { scheme: "standard-webhooks", secrets: [newStandardSecret()] });
    expect(g.status, g.text).toBe(201);
    expect(g.body.connectionId).not.toBe(a.body.connectionId);
  });
});
