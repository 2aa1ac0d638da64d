import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOperationTrace } from "@/lib/console/operation-trace";
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
});
