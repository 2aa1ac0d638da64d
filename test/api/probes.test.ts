import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { encryptSecret } from "@/lib/crypto/secret-box";
import { call, claim } from "../support/http";
import { callProvider, startFakeProvider, type FakeProvider } from "../support/fake-provider";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { fastWorkerFlags, startWorkerProcess, type WorkerProcess } from "../support/worker-process";
import { waitFor } from "../support/wait-for";
import { endLease } from "../support/wait-for-lease";

// Reconciliation probes: a tool declares a read-only status lookup at its provider; the worker
// asks it about the tool's unknown operations with bounded backoff. A conclusive "found"
// resolves the operation (trace: resolved by probe); "not found" proves nothing and leaves it
// unknown for an operator, and the worker stops asking after maxProbes.

let app: TestApp;
let keys: TenantKeys;
let provider: FakeProvider;
let worker: WorkerProcess;
const tool = "pay.charge";

beforeAll(async () => {
  app = await startTestApp();
  keys = await seedTenant(app.db, "probe");
  provider = await startFakeProvider();
  worker = await startWorkerProcess(app.url, [...fastWorkerFlags, "--probe-base-seconds", "1", "--probe-cap-seconds", "1"]);
  const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${tool}`, {
    key: keys.admin,
    body: {
      policy: {
        // Long, and ended by hand (endLease) once each test has done what needs it live: with
        // 1 s, a slow machine could let the first probe run before the provider call it looks for.
        leaseSeconds: 60,
        takeover: "never",
        probe: {
          url: `${provider.url}/effects/by-key/{downstreamKey}`,
          succeeded: { status: [200], path: "effect.id" },
          notFound: { status: [404] },
          resourceIdPath: "effect.id",
          maxProbes: 3,
        },
      },
    },
  });
  expect(res.status, res.text).toBe(201);
});
afterAll(async () => {
  await worker?.stop();
  await provider?.stop();
  await app?.stop();
});

const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });

describe("tool policy", () => {
  it("the probe is part of the tool definition, validated, and shown back with its defaults", async () => {
    const read = await call(app.baseUrl, "GET", `/api/v1/tools/${tool}`, { key: keys.admin });
    expect(read.body.policy.probe).toEqual({
      url: `${provider.url}/effects/by-key/{downstreamKey}`,
      succeeded: { status: [200], path: "effect.id" },
      notFound: { status: [404] },
      resourceIdPath: "effect.id",
      maxProbes: 3,
      timeoutMs: 5000,
    });
    const bad = await call(app.baseUrl, "PUT", "/api/v1/tools/pay.bad", {
      key: keys.admin,
      body: { policy: { probe: { url: "https://x.example.com/{apiKey}", succeeded: { status: [200] } } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("policy.probe.url");
    expect(await app.db.tool.count({ where: { name: "pay.bad" } })).toBe(0);
  });
});

describe("probing unknown operations", () => {
  it("the provider has the effect: the operation is resolved by probe (succeeded, with the resource id)", async () => {
    const idem = `idem-${randomUUID()}`;
    const c = await claim(app.baseUrl, keys.agent, idem, { tool, args: { amount: 100 } });
    expect(c.status).toBe(201);
    // The executor reached the provider, then died before completing.
    const { effect } = await callProvider(provider, { downstreamKey: c.body.downstreamKey, amount: 100 });
    await endLease(app.db, c.body.operationId);

    const settled = await waitFor("resolved by probe", async () => {
      const op = await operation(c.body.operationId);
      return op.state === "succeeded" ? op : null;
    });

    expect(settled.resolution).toMatchObject({ outcome: "succeeded", via: "probe", by: "system:probe", resourceId: effect.id, fromState: "unknown" });
    expect(settled.result).toMatchObject({ resourceId: effect.id });
    expect(settled.probeCount).toBe(1);
    const trace = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: c.body.operationId });
    const titles = trace!.timeline.map((e) => e.title);
    expect(titles).toContain("Probe 1 found the effect: resolved by probe");
    expect(trace!.timeline.find((e) => e.kind === "resolution")?.fields).toContainEqual({ label: "Via", value: "probe" });
    // The agent that retries now gets the stored result.
    const replay = await claim(app.baseUrl, keys.agent, idem, { tool, args: { amount: 100 } });
    expect(replay.status).toBe(200);
    expect(replay.body.result).toMatchObject({ resourceId: effect.id });
    expect(provider.effects()).toHaveLength(1);
  });

  it("not found is inconclusive: the operation stays unknown, and the worker stops after maxProbes", async () => {
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool, args: { amount: 200 } });
    expect(c.status).toBe(201);
    // This executor died before reaching the provider: there is nothing to find.
    await endLease(app.db, c.body.operationId);

    // probeCount counts probes when they are booked, before their lookup runs: wait until the
    // third one is recorded, so its lookup is in the count taken here.
    const recorded = () => app.db.auditEvent.count({ where: { targetId: c.body.operationId, action: "operation.probed" } });
    await waitFor("three probes recorded", async () => (await recorded()) === 3, 30_000);
    const lookupsThen = provider.lookups();
    await new Promise((r) => setTimeout(r, 2000));

    const op = await operation(c.body.operationId);
    expect(op).toMatchObject({ state: "unknown", resolution: null, probeCount: 3 });
    const probed = await app.db.auditEvent.findMany({ where: { targetId: op.id, action: "operation.probed" }, orderBy: { id: "asc" } });
    expect(probed.map((a) => (a.after as { verdict: string }).verdict)).toEqual(["not_found", "not_found", "not_found"]);
    expect(probed[0]!.reason).toMatch(/not found, which is not proof that nothing happened/);
    // Bounded: no fourth probe.
    expect(provider.lookups()).toBe(lookupsThen);
    const trace = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: op.id });
    expect(trace!.timeline.filter((e) => e.kind === "probe").map((e) => e.title)).toEqual([
      "Probe 1 not found: inconclusive, stays unknown",
      "Probe 2 not found: inconclusive, stays unknown",
      "Probe 3 not found: inconclusive, stays unknown",
    ]);
    expect(trace!.resolvable).toBe(true);
  });

  it("a probe URL that an operation's value makes invalid is recorded as skipped, and the pass goes on", async () => {
    const hostTool = "pay.by-host";
    const put = await call(app.baseUrl, "PUT", `/api/v1/tools/${hostTool}`, {
      key: keys.admin,
      body: { policy: { leaseSeconds: 60, takeover: "never", probe: { url: "http://{resourceId}.provider.example/x", succeeded: { status: [200] }, maxProbes: 1 } } },
    });
    expect(put.status, put.text).toBe(201);
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: hostTool, args: { amount: 300 } });
    expect(c.status).toBe(201);
    // The executor reported a resource id that cannot be part of a host name ("a/b" → "a%2Fb").
    await app.db.attempt.updateMany({ where: { operationId: c.body.operationId }, data: { provider: { resourceId: "a/b" } } });
    await endLease(app.db, c.body.operationId);

    const probed = await waitFor("the probe recorded", async () =>
      app.db.auditEvent.findFirst({ where: { targetId: c.body.operationId, action: "operation.probed" } }),
    );
    expect((probed.after as { verdict: string }).verdict).toBe("skipped");
    expect(probed.reason).toMatch(/the probe URL is not a valid URL with this operation's values/);
    expect(await operation(c.body.operationId)).toMatchObject({ state: "unknown", probeCount: 1 });
  });

  it("the probe sends its stored header values, sealed at rest, shown as [redacted], kept by a GET-then-PUT round trip", async () => {
    const sealedTool = "pay.sealed";
    const probe = {
      url: `${provider.url}/effects/by-key/{downstreamKey}`,
      headers: { Authorization: "Bearer sk_test_probe_secret", "X-Account": "acct_42" },
      succeeded: { status: [200], path: "effect.id" },
      notFound: { status: [404] },
      maxProbes: 1,
    };
    const created = await call(app.baseUrl, "PUT", `/api/v1/tools/${sealedTool}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "never", probe } } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.policy.probe.headers).toEqual({ Authorization: "[redacted]", "X-Account": "[redacted]" });
    const stored = await app.db.tool.findFirstOrThrow({ where: { tenantId: keys.tenantId, name: sealedTool } });
    expect(JSON.stringify(stored.probe)).not.toContain("sk_test_probe_secret");
    expect(JSON.stringify(stored.probe)).not.toContain("acct_42");
    const audit = await app.db.auditEvent.findMany({ where: { tenantId: keys.tenantId, targetId: sealedTool } });
    expect(audit.length).toBeGreaterThan(0);
    expect(JSON.stringify(audit.map((e) => [e.before, e.after, e.reason]))).not.toContain("sk_test_probe_secret");

    // An admin reads the tool, changes the lease, and writes it back with the redacted values.
    const read = await call(app.baseUrl, "GET", `/api/v1/tools/${sealedTool}`, { key: keys.admin });
    const policy = { ...read.body.policy, leaseSeconds: 90 };
    const replaced = await call(app.baseUrl, "PUT", `/api/v1/tools/${sealedTool}`, { key: keys.admin, body: { description: read.body.description, annotations: read.body.annotations, policy } });
    expect(replaced.status, replaced.text).toBe(200);

    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: sealedTool, args: { amount: 400 } });
    expect(c.status).toBe(201);
    const before = provider.lookupHeaders().length;
    await endLease(app.db, c.body.operationId);
    await waitFor("the probe's lookup", async () => provider.lookupHeaders().length > before);
    const sent = provider.lookupHeaders()[before]!;
    expect(sent.authorization).toBe("Bearer sk_test_probe_secret");
    expect(sent["x-account"]).toBe("acct_42");
  });

  it("[redacted] for a header the tool has no value for is refused, and the tool is left as it was", async () => {
    const name = "pay.no-secret";
    const probe = { url: `${provider.url}/effects/by-key/{downstreamKey}`, succeeded: { status: [200] } };
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { probe } } })).status).toBe(201);
    const bad = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, {
      key: keys.admin,
      body: { policy: { leaseSeconds: 99, probe: { ...probe, headers: { Authorization: "[redacted]" } } } },
    });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.code).toBe("invalid-request");
    expect(bad.body.errors[0].path).toBe("policy.probe.headers.Authorization");
    const tool = await app.db.tool.findFirstOrThrow({ where: { tenantId: keys.tenantId, name } });
    expect(tool.leaseSeconds).toBe(30);
    expect(tool.probe).not.toHaveProperty("sealedHeaders");
  });

  it("a header sealed under another TOLLGATE_SECRET_KEY is not sent: the probe is skipped and says why", async () => {
    const name = "pay.other-key";
    const probe = { url: `${provider.url}/effects/by-key/{downstreamKey}`, headers: { Authorization: "Bearer x" }, succeeded: { status: [200] }, maxProbes: 1 };
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "never", probe } } })).status).toBe(201);
    // As if the server's secret had changed since the tool was saved.
    const tool = await app.db.tool.findFirstOrThrow({ where: { tenantId: keys.tenantId, name } });
    const sealedElsewhere = encryptSecret("Bearer x", "another-secret-key-0123456789abcdef0123");
    await app.db.tool.update({ where: { id: tool.id }, data: { probe: { ...(tool.probe as object), sealedHeaders: { Authorization: sealedElsewhere } } } });
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: name, args: { amount: 500 } });
    expect(c.status).toBe(201);
    const lookupsBefore = provider.lookups();
    await endLease(app.db, c.body.operationId);
    const probed = await waitFor("the probe recorded", async () =>
      app.db.auditEvent.findFirst({ where: { targetId: c.body.operationId, action: "operation.probed" } }),
    );
    expect((probed.after as { verdict: string }).verdict).toBe("skipped");
    expect(probed.reason).toMatch(/cannot be opened with this server's TOLLGATE_SECRET_KEY/);
    expect(provider.lookups()).toBe(lookupsBefore);
  });
});
