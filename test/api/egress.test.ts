import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { EgressRefusedError, egressPolicy, guardedFetch } from "@/lib/http/egress";
import { call, claim } from "../support/http";
import { startEventReceiver, type EventReceiver } from "../support/event-receiver";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider";
import { seedTenant, startTestApp, type TestApp } from "../support/test-app";
import { fastWorkerFlags, startWorkerProcess, type WorkerProcess } from "../support/worker-process";
import { waitFor } from "../support/wait-for";
import { endLease } from "../support/wait-for-lease";

// The egress policy on real sockets: a tenant admin's URL cannot make Tollgate connect to the
// machine itself or its private network, whether the URL names the address, an IPv6 form of
// it, or a host name that resolves to it. Then the same through the worker, as deployed: an
// event delivery and a probe aimed at 127.0.0.1, with the production default, never arrive.

let server: Server;
let target: Server;
let connections = 0;
let targetConnections = 0;
let port = 0;
let targetPort = 0;

beforeAll(async () => {
  // Counts TCP connections, not requests: "refused" means no socket was opened at all.
  server = createServer((req, res) => {
    if (req.url === "/redirect") res.writeHead(302, { location: `http://127.0.0.2:${targetPort}/secret` }).end();
    else res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  server.on("connection", () => connections++);
  target = createServer((_req, res) => res.end("secret served on 127.0.0.2"));
  target.on("connection", () => targetConnections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.2", resolve));
  port = (server.address() as AddressInfo).port;
  targetPort = (target.address() as AddressInfo).port;
});
afterAll(async () => {
  await Promise.all([server, target].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

describe("guardedFetch", () => {
  const refused = guardedFetch(egressPolicy());
  afterAll(() => refused.close());

  it.each([
    ["an IPv4 literal", () => `http://127.0.0.1:${port}/x`, "127.0.0.1 is a private"],
    ["a decimal IPv4 literal", () => `http://2130706433:${port}/x`, "127.0.0.1 is a private"],
    ["a hex, shortened IPv4 literal", () => `http://0x7f.1:${port}/x`, "127.0.0.1 is a private"],
    ["0 (0.0.0.0, which Linux connects to the host itself)", () => `http://0:${port}/x`, "0.0.0.0 is a private"],
    ["an IPv4-mapped IPv6 literal", () => `http://[::ffff:127.0.0.1]:${port}/x`, "::ffff:7f00:1 is a private"],
    ["an IPv4-compatible IPv6 literal", () => `http://[::7f00:1]:${port}/x`, "::7f00:1 is a private"],
    ["the IPv6 loopback", () => `http://[::1]:${port}/x`, "::1 is a private"],
    ["a name that resolves to loopback", () => `http://localhost:${port}/x`, "localhost did not resolve to public addresses only"],
    ["the same over https (the lookup goes through tls.connect)", () => `https://localhost:${port}/x`, "localhost did not resolve to public addresses only"],
  ])("refuses %s before a connection is opened", async (_label, url, mentioned) => {
    const before = connections;
    const error = await refused(url(), { method: "POST", body: "{}" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect((error as Error).message).toContain(mentioned);
    expect((error as Error).message).toContain("TOLLGATE_EGRESS_ALLOW");
    expect(connections).toBe(before);
  });

  // The refusal is shown to every console role: had a name that resolves to a private address
  // been told apart from one that does not resolve, a tenant could try names (db.internal,
  // vault.corp…) and learn which private ones Tollgate's resolver knows.
  it("says the same of a name that does not resolve as of one that resolves to a private address", async () => {
    const messageFor = async (host: string) => {
      const error = await refused(`http://${host}:${port}/x`, { method: "POST", body: "{}" }).catch((e: unknown) => e);
      expect(error, String(error)).toBeInstanceOf(EgressRefusedError);
      return (error as Error).message.replaceAll(host, "HOST");
    };
    const before = connections;
    const unresolved = await messageFor(`nowhere-${randomUUID().slice(0, 8)}.invalid`);
    expect(unresolved).toBe(await messageFor("localhost"));
    expect(unresolved).not.toMatch(/resolves to a private|did not resolve \(DNS\)/);
    // Allowed or not, a name that does not resolve says the same.
    const allowed = guardedFetch(egressPolicy(["127.0.0.1/32", "::1/128"]));
    try {
      const error = await allowed(`http://nowhere-${randomUUID().slice(0, 8)}.invalid:${port}/x`, { method: "GET" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EgressRefusedError);
    } finally {
      await allowed.close();
    }
    expect(connections).toBe(before);
  });

  it("lets an allowed range through, by address and by name", async () => {
    const allowed = guardedFetch(egressPolicy(["127.0.0.1/32", "::1/128"]));
    try {
      const byAddress = await allowed(`http://127.0.0.1:${port}/x`, { method: "GET" });
      expect(byAddress.status).toBe(200);
      expect(await byAddress.json()).toEqual({ ok: true });
      const byName = await allowed(`http://localhost:${port}/x`, { method: "GET" });
      expect(byName.status).toBe(200);
      expect(await byName.json()).toEqual({ ok: true });
    } finally {
      await allowed.close();
    }
  });

  it("never follows a redirect, even when the caller asks it to: the next hop would be the tenant's choice", async () => {
    const allowed = guardedFetch(egressPolicy(["127.0.0.1/32"]));
    try {
      const res = await allowed(`http://127.0.0.1:${port}/redirect`, { method: "GET", redirect: "follow" });
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe(`http://127.0.0.2:${targetPort}/secret`);
      // And the address itself is refused by the connection pool, whatever URL reaches it.
      await expect(allowed(`http://127.0.0.2:${targetPort}/secret`, { method: "GET" })).rejects.toBeInstanceOf(EgressRefusedError);
      expect(targetConnections).toBe(0);
    } finally {
      await allowed.close();
    }
  });
});

describe("the worker with the production default (public addresses only)", () => {
  let app: TestApp;
  let worker: WorkerProcess;
  let receiver: EventReceiver;
  let provider: FakeProvider;

  beforeAll(async () => {
    [app, receiver, provider] = await Promise.all([startTestApp(), startEventReceiver(), startFakeProvider()]);
    worker = await startWorkerProcess(app.url, [...fastWorkerFlags, "--probe-base-seconds", "1", "--probe-cap-seconds", "1"], { egressAllow: "" });
  });
  afterAll(async () => {
    await worker?.stop();
    await Promise.all([receiver?.stop(), provider?.stop()]);
    await app?.stop();
  });

  it("a worker given an allow list that is not CIDRs does not start, and says which", async () => {
    const error = await startWorkerProcess(app.url, fastWorkerFlags, { egressAllow: "127.0.0.1/32, 10.0.0.0/33" }).catch((e: unknown) => e);
    expect(String(error)).toMatch(/worker exited early/);
    expect(String(error)).toContain('TOLLGATE_EGRESS_ALLOW: "10.0.0.0/33" has an invalid prefix length (0 to 32)');
  });

  it("refuses to deliver an event to a subscription on 127.0.0.1, and says why on the delivery", async () => {
    const keys = await seedTenant(app.db, "egress-d");
    const sub = await call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/feed", { key: keys.admin, body: { url: receiver.url, events: ["operation.succeeded"] } });
    expect(sub.status, sub.text).toBe(201);
    const tool = await call(app.baseUrl, "PUT", "/api/v1/tools/e.send", { key: keys.admin, body: { policy: {} } });
    expect(tool.status, tool.text).toBe(201);
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: "e.send", args: { to: "x" } });
    expect(c.status, c.text).toBe(201);
    const done = await call(app.baseUrl, "POST", `/api/v1/operations/${c.body.operationId}/complete`, {
      key: keys.agent,
      body: { fencingToken: c.body.attempt.fencingToken, outcome: "succeeded", result: { statusCode: 201, resourceId: "T-1" } },
    });
    expect(done.status, done.text).toBe(200);

    const delivery = await waitFor("a refused try", async () => {
      const d = await app.db.eventDelivery.findFirst({ where: { tenantId: keys.tenantId } });
      return d && d.attempts >= 1 ? d : null;
    });
    expect(delivery.state).not.toBe("delivered");
    expect(delivery.lastStatus).toBeNull();
    expect(delivery.lastError).toMatch(/^refused by the egress policy: 127\.0\.0\.1 is a private, loopback or reserved address/);
    expect(receiver.received()).toHaveLength(0);
    // The worker's log line says why too, not only "delivery retry" (newcomer review).
    const line = await waitFor("the worker's log line", async () => worker.logs.find((l) => l.includes(delivery.id) && l.includes('"delivery retry"')) ?? null);
    expect(JSON.parse(line)).toMatchObject({ deliveryId: delivery.id, status: null, error: expect.stringMatching(/^refused by the egress policy: 127\.0\.0\.1/) });
  });

  it("refuses to probe a provider on 127.0.0.1: the probe is inconclusive and the operation stays unknown", async () => {
    const keys = await seedTenant(app.db, "egress-p");
    const tool = await call(app.baseUrl, "PUT", "/api/v1/tools/e.charge", {
      key: keys.admin,
      body: {
        policy: {
          leaseSeconds: 60,
          takeover: "never",
          probe: { url: `${provider.url}/effects/by-key/{downstreamKey}`, succeeded: { status: [200], path: "effect.id" }, maxProbes: 1 },
        },
      },
    });
    expect(tool.status, tool.text).toBe(201);
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: "e.charge", args: { amount: 5 } });
    expect(c.status, c.text).toBe(201);
    await endLease(app.db, c.body.operationId);

    const trace = await waitFor("the probe's record", async () => {
      const t = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: c.body.operationId });
      return t && JSON.stringify(t.timeline).includes("egress policy") ? t : null;
    });
    expect(JSON.stringify(trace.timeline)).toContain("failed: refused by the egress policy: 127.0.0.1");
    expect(await app.db.operation.findUniqueOrThrow({ where: { id: c.body.operationId } })).toMatchObject({ state: "unknown", resolution: null });
    expect(provider.lookups()).toBe(0);
  });
});
