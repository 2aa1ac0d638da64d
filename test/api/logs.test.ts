import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logDigest } from "@/lib/crypto/digest";
import { call, claim, type Reply } from "../support/http";
import { seedTenant, startTestApp, TEST_SECRET, type TenantKeys, type TestApp } from "../support/test-app";
import { deliver, newStandardSecret, putConnection, signStandard, ticketEvent } from "../support/webhooks";

// Logs are read by more people and systems than the database is: they must let an operator
// correlate a request (request id, tenant, tool, operation, attempt, key digest) without ever
// holding an API key, an Idempotency-Key or the server secret.

type LogLine = { requestId?: string; msg?: string; route?: string; status?: number; [field: string]: unknown };

const TOOL = "tickets.create";

let app: TestApp;
let keys: TenantKeys;
const bogusKey = `tgk_bogus${randomBytes(24).toString("base64url")}`;
const idemKey = `idem-${randomBytes(12).toString("hex")}`;
const badIdemKey = `bad idem-${randomBytes(12).toString("hex")}`;
const webhookSecret = newStandardSecret();
const wrongWebhookSecret = newStandardSecret();
let subscriptionSecret = "";
const replies: Record<string, Reply> = {};

beforeAll(async () => {
  // SSO configured (its issuer is never reached): an SSO callback's ?error= is logged by next-auth.
  app = await startTestApp({ env: { OIDC_ISSUER: "http://127.0.0.1:9/", OIDC_CLIENT_ID: "tollgate-test", OIDC_CLIENT_SECRET: "not-a-secret" } });
  keys = await seedTenant(app.db, "logco");
  replies.putTool = await call(app.baseUrl, "PUT", `/api/v1/tools/${TOOL}`, { key: keys.admin, body: {} });
  replies.claim = await claim(app.baseUrl, keys.agent, idemKey, { tool: TOOL, args: { title: "Printer on fire" } });
  replies.lookup = await call(app.baseUrl, "GET", `/api/v1/operations?tool=${TOOL}&idempotencyKey=${encodeURIComponent(idemKey)}`, { key: keys.agent });
  replies.badAuth = await call(app.baseUrl, "GET", "/api/v1/tools", { key: bogusKey });
  replies.badAuthClaim = await claim(app.baseUrl, bogusKey, idemKey, { tool: TOOL, args: {} });
  replies.badIdemKey = await claim(app.baseUrl, keys.agent, badIdemKey, { tool: TOOL, args: {} });
  replies.wrongMediaType = await call(app.baseUrl, "POST", "/api/v1/operations", {
    key: keys.agent,
    idempotencyKey: idemKey,
    rawBody: "{}",
    headers: { "content-type": "text/plain" },
  });
  // Provider and subscriber secrets: given once, then only ever used to sign or verify.
  replies.putConnection = await putConnection(app.baseUrl, keys.admin, "tickets", { scheme: "standard-webhooks", secrets: [webhookSecret] });
  const connectionId = String(replies.putConnection.body?.connectionId);
  replies.webhookGood = await deliver(app.baseUrl, connectionId, signStandard(webhookSecret, ticketEvent("ticket.created", null)));
  replies.webhookForged = await deliver(app.baseUrl, connectionId, signStandard(wrongWebhookSecret, ticketEvent("ticket.created", null)));
  replies.putSubscription = await call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/feed", {
    key: keys.admin,
    body: { url: "http://127.0.0.1:9/events", events: ["operation.unknown"] },
  });
  subscriptionSecret = String(replies.putSubscription.body?.secret);
  expect(Object.fromEntries(Object.entries(replies).map(([name, r]) => [name, r.status]))).toEqual({
    putTool: 201,
    claim: 201,
    lookup: 200,
    badAuth: 401,
    badAuthClaim: 401,
    badIdemKey: 400,
    wrongMediaType: 415,
    putConnection: 201,
    webhookGood: 200,
    webhookForged: 400,
    putSubscription: 201,
  });
  // pino writes asynchronously to a pipe: wait until every request's line has arrived.
  const ids = Object.values(replies).map(requestIdOf);
  const deadline = Date.now() + 15_000;
  while (!ids.every((id) => lineFor(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
});

afterAll(async () => {
  await app?.stop();
});

function requestIdOf(reply: Reply): string {
  const id = reply.headers.get("x-request-id");
  if (!id) throw new Error("response without X-Request-Id");
  return id;
}

function jsonLines(): LogLine[] {
  return app.servers[0]!.logs.flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return parsed && typeof parsed === "object" ? [parsed as LogLine] : [];
    } catch {
      return [];
    }
  });
}

function lineFor(requestId: string): LogLine | undefined {
  return jsonLines().find((l) => l.requestId === requestId);
}

describe("next-auth's logs", () => {
  it("are one JSON line each, with next-auth's code and nothing the caller sent: a junk session cookie, a forged SSO error", async () => {
    const forged = `x\n{"level":30,"msg":"forged-${randomBytes(4).toString("hex")}"}\u001b[2J`;
    const junk = { cookie: `next-auth.session-token=junk-${randomBytes(8).toString("hex")}` };
    const session = await call(app.baseUrl, "GET", "/api/auth/session", { headers: junk });
    const page = await call(app.baseUrl, "GET", "/t/logco/operations", { headers: junk });
    const callback = await call(app.baseUrl, "GET", `/api/auth/callback/oidc?error=${encodeURIComponent(forged)}`);
    // Each ends at a page or an empty session (redirects followed), never at an error.
    expect([session.status, page.status, callback.status]).toEqual([200, 200, 200]);

    const deadline = Date.now() + 15_000;
    const codes = () => jsonLines().map((l) => l.nextAuth);
    while (!(codes().includes("JWT_SESSION_ERROR") && codes().includes("OAUTH_CALLBACK_HANDLER_ERROR")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(codes()).toEqual(expect.arrayContaining(["JWT_SESSION_ERROR", "OAUTH_CALLBACK_HANDLER_ERROR"]));
    const everything = app.servers[0]!.logs.join("\n");
    expect(everything).not.toContain("[next-auth]");
    expect(everything).not.toContain("forged-");
    expect(everything).not.toContain("junk-");
  });
});

describe("request logs", () => {
  it("never contain a raw API key, a raw Idempotency-Key, the server secret, or a webhook or subscription secret", () => {
    // Joined without separators so that a line split across two stdout chunks is still searched whole.
    const everything = app.servers[0]!.logs.join("");
    const secrets = {
      admin: keys.admin,
      agent: keys.agent,
      bogus: bogusKey,
      idemKey,
      badIdemKey,
      serverSecret: TEST_SECRET,
      webhookSecret,
      webhookSecretKey: webhookSecret.slice(6),
      wrongWebhookSecret: wrongWebhookSecret.slice(6),
      subscriptionSecret: subscriptionSecret.slice(6),
    };
    expect(subscriptionSecret).toMatch(/^whsec_.{20,}/);

    const leaked = Object.entries(secrets).filter(([, secret]) => everything.includes(secret)).map(([name]) => name);

    expect(leaked).toEqual([]);
    expect(everything).not.toMatch(/Bearer\s+tgk_/i);
    expect(everything).not.toContain(bogusKey.slice(4, 30));
  });

  it("write exactly one line per request, whose requestId is the response's X-Request-Id", () => {
    for (const [name, reply] of Object.entries(replies)) {
      const requestId = requestIdOf(reply);
      const lines = jsonLines().filter((l) => l.requestId === requestId);
      expect({ name, lines: lines.length }).toEqual({ name, lines: 1 });
      expect(lines[0]).toMatchObject({ msg: "request", status: reply.status });
    }
  });

  it("give the claim's line everything needed to correlate it: keyDigest, tenantId, tool, operationId, attempt", () => {
    const line = lineFor(requestIdOf(replies.claim!));

    expect(line).toMatchObject({
      route: "/api/v1/operations",
      method: "POST",
      status: 201,
      keyDigest: logDigest(idemKey),
      tenantId: keys.tenantId,
      tool: TOOL,
      operationId: replies.claim!.body.operationId,
      attempt: 1,
    });
  });

  it("give the lookup's line the key digest and the operation found, not the key", () => {
    const line = lineFor(requestIdOf(replies.lookup!));

    expect(line).toMatchObject({ status: 200, keyDigest: logDigest(idemKey), tool: TOOL, operationId: replies.claim!.body.operationId, tenantId: keys.tenantId });
  });

  it("name the operation on every protocol line, refusals included: key digest, tool, operation, attempt, workflow", async () => {
    const key = `idem-${randomBytes(12).toString("hex")}`;
    const body = { tool: TOOL, args: { title: "Toner low" }, workflowId: "wf-logs" };
    const granted = await claim(app.baseUrl, keys.agent, key, body);
    const { operationId } = granted.body;
    const fencingToken = String(granted.body.attempt.fencingToken);
    const ops = `/api/v1/operations/${operationId}`;
    const sent: Record<string, Reply> = {
      inProgress: await claim(app.baseUrl, keys.agent, key, body),
      // A retry that leaves the workflow id out is logged with the one the operation was claimed with.
      inProgressWithoutWorkflow: await claim(app.baseUrl, keys.agent, key, { tool: TOOL, args: body.args }),
      heartbeat: await call(app.baseUrl, "POST", `${ops}/heartbeat`, { key: keys.agent, body: { fencingToken } }),
      staleComplete: await call(app.baseUrl, "POST", `${ops}/complete`, { key: keys.agent, body: { fencingToken: String(BigInt(fencingToken) + 1000n), outcome: "succeeded" } }),
      complete: await call(app.baseUrl, "POST", `${ops}/complete`, { key: keys.agent, body: { fencingToken, outcome: "succeeded" } }),
      read: await call(app.baseUrl, "GET", ops, { key: keys.agent }),
    };
    expect(Object.fromEntries(Object.entries(sent).map(([name, r]) => [name, r.body?.code ?? r.status]))).toEqual({
      inProgress: "operation-in-progress",
      inProgressWithoutWorkflow: "operation-in-progress",
      heartbeat: 200,
      staleComplete: "lease-lost",
      complete: 200,
      read: 200,
    });
    const ids = Object.values(sent).map(requestIdOf);
    const deadline = Date.now() + 15_000;
    while (!ids.every((id) => lineFor(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));

    const full = { operationId, tool: TOOL, attempt: 1, tenantId: keys.tenantId, keyDigest: logDigest(key), workflowId: "wf-logs" };
    for (const name of Object.keys(sent)) {
      expect({ name, line: lineFor(requestIdOf(sent[name]!)) }).toMatchObject({ name, line: full });
    }
  });

  it("log a failed authentication with its status and no tenant", () => {
    const line = lineFor(requestIdOf(replies.badAuth!));

    expect(line).toMatchObject({ status: 401, route: "/api/v1/tools" });
    expect(line).not.toHaveProperty("tenantId");
  });

  it("use a caller's X-Request-Id when it is short and printable, and replace one that is not", async () => {
    const given = `trace-${randomBytes(6).toString("hex")}`;
    const tooLong = `t${"x".repeat(200)}`;

    const echoed = await call(app.baseUrl, "GET", "/api/v1/tools", { key: keys.admin, headers: { "x-request-id": given } });
    const replaced = await call(app.baseUrl, "GET", "/api/v1/tools", { key: keys.admin, headers: { "x-request-id": tooLong } });

    expect(echoed.headers.get("x-request-id")).toBe(given);
    expect(replaced.headers.get("x-request-id")).toMatch(/^req_/);
    const deadline = Date.now() + 15_000;
    while (!(lineFor(given) && lineFor(requestIdOf(replaced))) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(lineFor(given)).toMatchObject({ status: 200 });
    expect(lineFor(requestIdOf(replaced))).toMatchObject({ status: 200 });
  });
});
