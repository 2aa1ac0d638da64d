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
import { createConnection, deliver, newStandardSecret, signStandard, ticketEvent } from "../support/webhooks";
import { matchWebhookEvent } from "@/lib/webhooks/match-webhook-event";

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

// Waits until the worker has tried the operation's probe at least `times` more times: each try,
// recorded or not, moves its next probe time, at most twice (booked, then an uncounted skip's
// retry at the cap).
async function triedAgain(operationId: string, times: number) {
  const seen = new Set<number>();
  await waitFor(`${times} more tries`, async () => {
    seen.add((await operation(operationId)).nextProbeAt?.getTime() ?? 0);
    return seen.size > 2 * times;
  }, 30_000, 50);
}

// An operation reported unknown by its agent, of a tool without a probe of its own (the worker
// stays out of the way: the test plays the probe pass's last step). Returns its id and token.
async function unknownOperation(name: string, amount: number) {
  const put = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "never", maxAttempts: 3 } } });
  expect([200, 201]).toContain(put.status);
  const idem = `idem-${randomUUID()}`;
  const c = await claim(app.baseUrl, keys.agent, idem, { tool: name, args: { amount } });
  expect(c.status, c.text).toBe(201);
  const reported = await call(app.baseUrl, "POST", `/api/v1/operations/${c.body.operationId}/complete`, {
    key: keys.agent,
    body: { fencingToken: c.body.attempt.fencingToken, outcome: "unknown" },
  });
  expect(reported.status, reported.text).toBe(200);
  return { id: c.body.operationId as string, token: BigInt(c.body.attempt.fencingToken), idem };
}

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

  it("a header value with a line break or a control character, or a URL with user:pass@, is refused: 400, nothing stored, the value never repeated", async () => {
    const credential = "c2tfbGl2ZV9wcm9iZV9wdXQ";
    const url = `${provider.url}/effects/by-key/{downstreamKey}`;
    const cases: [Record<string, unknown>, string][] = [
      [{ url, headers: { Authorization: `Basic ${credential}\r\nbW9yZQ==` } }, "policy.probe.headers.Authorization"],
      [{ url, headers: { Authorization: `Bearer ${credential}\u0000` } }, "policy.probe.headers.Authorization"],
      [{ url: url.replace("http://", `http://user:${credential}@`) }, "policy.probe.url"],
    ];
    for (const [probe, path] of cases) {
      const bad = await call(app.baseUrl, "PUT", "/api/v1/tools/pay.wrapped", {
        key: keys.admin,
        body: { policy: { probe: { succeeded: { status: [200] }, ...probe } } },
      });
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
      expect(bad.text).not.toContain(credential);
    }
    expect(await app.db.tool.count({ where: { name: "pay.wrapped" } })).toBe(0);
    expect(await app.db.auditEvent.count({ where: { targetId: "pay.wrapped" } })).toBe(0);
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

  it("[redacted] does not carry a stored credential to another host: whoever moves the probe types the value again", async () => {
    const name = "pay.moved";
    const probe = { url: `${provider.url}/effects/by-key/{downstreamKey}`, headers: { Authorization: "Bearer sk_test_kept_home" }, succeeded: { status: [200] } };
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { probe } } })).status).toBe(201);

    const moved = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, {
      key: keys.admin,
      body: { policy: { probe: { ...probe, url: "https://collector.example/{downstreamKey}", headers: { Authorization: "[redacted]" } } } },
    });

    expect(moved.status, moved.text).toBe(400);
    expect(moved.body.errors[0].path).toBe("policy.probe.headers.Authorization");
    expect(moved.body.detail).toContain("https://collector.example");
    const tool = await app.db.tool.findFirstOrThrow({ where: { tenantId: keys.tenantId, name } });
    expect((tool.probe as { url: string }).url).toBe(probe.url);
  });

  it("a resource id that is a dot segment (\"..\") is not filled into the probe's path: skipped, nothing asked", async () => {
    const name = "pay.by-resource";
    const put = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, {
      key: keys.admin,
      body: { policy: { leaseSeconds: 60, takeover: "never", probe: { url: `${provider.url}/effects/{resourceId}`, succeeded: { status: [200] }, maxProbes: 1 } } },
    });
    expect(put.status, put.text).toBe(201);
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: name, args: { amount: 500 } });
    expect(c.status).toBe(201);
    await app.db.attempt.updateMany({ where: { operationId: c.body.operationId }, data: { provider: { resourceId: ".." } } });
    const lookupsThen = provider.lookups();
    await endLease(app.db, c.body.operationId);

    const probed = await waitFor("the probe recorded", async () =>
      app.db.auditEvent.findFirst({ where: { targetId: c.body.operationId, action: "operation.probed" } }),
    );
    expect((probed.after as { verdict: string }).verdict).toBe("skipped");
    expect(probed.reason).toMatch(/the probe URL is not a valid URL with this operation's values/);
    expect(provider.lookups()).toBe(lookupsThen);
  });

  it("a header value stored before values were checked (a line break inside) is never sent, and never reaches the audit log", async () => {
    const name = "pay.legacy-wrapped";
    const credential = "c2tfbGl2ZV9sZWdhY3lfd3JhcHBlZA";
    const probe = { url: `${provider.url}/effects/by-key/{downstreamKey}`, succeeded: { status: [200], path: "effect.id" }, maxProbes: 1 };
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "never", probe } } })).status).toBe(201);
    // Stored as probes were before header values were sealed, or checked: plain, wrapped at 76 columns.
    await app.db.tool.updateMany({
      where: { tenantId: keys.tenantId, name },
      data: { probe: { ...probe, timeoutMs: 5000, headers: { Authorization: `Basic ${credential}\r\nbW9yZQ==` } } },
    });
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: name, args: { amount: 600 } });
    expect(c.status).toBe(201);
    const lookupsBefore = provider.lookups();
    await endLease(app.db, c.body.operationId);

    const probed = await waitFor("the probe recorded", async () =>
      app.db.auditEvent.findFirst({ where: { targetId: c.body.operationId, action: "operation.probed" } }),
    );
    const audit = await app.db.auditEvent.findMany({ where: { tenantId: keys.tenantId, targetId: { in: [c.body.operationId, name] } } });
    expect(JSON.stringify(audit.map((e) => [e.before, e.after, e.reason]))).not.toContain(credential);
    const trace = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: c.body.operationId });
    expect(JSON.stringify(trace)).not.toContain(credential);
    expect(probed.after).toMatchObject({ verdict: "skipped", counted: false });
    expect(probed.reason).toMatch(/the tool's probe definition is not valid \(at headers\.Authorization\): PUT the tool again/);
    expect(provider.lookups()).toBe(lookupsBefore);
  });

  it("a header sealed under another TOLLGATE_SECRET_KEY is not sent: the probe is skipped, says why, and uses none of the budget", async () => {
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
    expect(probed.after).toMatchObject({ verdict: "skipped", counted: false });
    expect(probed.reason).toMatch(/cannot be opened with this server's TOLLGATE_SECRET_KEY.*not counted against maxProbes/);
    // maxProbes is 1, and the worker keeps trying (at the cap, 1 s here): nothing was asked yet,
    // and the reason is written once, from when it began, not once per try.
    const recorded = () =>
      app.db.auditEvent.findMany({ where: { targetId: c.body.operationId, action: "operation.probed" }, orderBy: { id: "asc" } });
    await triedAgain(c.body.operationId, 2);
    expect((await recorded()).map((a) => a.id)).toEqual([probed.id]);
    expect(provider.lookups()).toBe(lookupsBefore);

    // Another reason (a definition stored before header values were checked) is written, once.
    await app.db.tool.update({
      where: { id: tool.id },
      data: { probe: { ...probe, timeoutMs: 5000, headers: { Authorization: "Bearer x\r\ny" } } },
    });
    const invalid = await waitFor("the new reason recorded", async () => (await recorded())[1]);
    expect(invalid.after).toMatchObject({ verdict: "skipped", counted: false });
    expect(invalid.reason).toMatch(/the tool's probe definition is not valid \(at headers\.Authorization\)/);
    await triedAgain(c.body.operationId, 1);
    expect(await recorded()).toHaveLength(2);
    expect(provider.lookups()).toBe(lookupsBefore);
    const trace = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: c.body.operationId });
    expect(trace!.timeline.filter((e) => e.kind === "probe").map((e) => e.title)).toEqual(["Probe 1 could not be sent", "Probe 1 could not be sent"]);

    // The admin saves the value again: the probe is sent, and it is probe 1.
    const fixed = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "never", probe } } });
    expect(fixed.status, fixed.text).toBe(200);
    const asked = await waitFor("the probe sent", async () =>
      app.db.auditEvent.findFirst({ where: { targetId: c.body.operationId, action: "operation.probed", after: { path: ["verdict"], equals: "inconclusive" } } }),
    );
    expect(asked.after).toMatchObject({ probe: 1, counted: true });
    expect(provider.lookups()).toBeGreaterThan(lookupsBefore);
  });

  it("an operation unknown a second time (an operator's retry, then a new attempt that ran out) gets a fresh budget", async () => {
    const name = "pay.twice";
    const probe = { url: `${provider.url}/effects/by-key/{downstreamKey}`, succeeded: { status: [200], path: "effect.id" }, notFound: { status: [404] }, maxProbes: 1 };
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "never", probe } } })).status).toBe(201);
    const idem = `idem-${randomUUID()}`;
    const first = await claim(app.baseUrl, keys.agent, idem, { tool: name, args: { amount: 700 } });
    expect(first.status).toBe(201);
    await endLease(app.db, first.body.operationId);
    const probesOf = (attempt: number) =>
      app.db.auditEvent.findMany({ where: { targetId: first.body.operationId, action: "operation.probed", after: { path: ["attempt"], equals: attempt } } });
    await waitFor("attempt 1's probe", async () => (await probesOf(1)).length === 1);

    const retry = await call(app.baseUrl, "POST", `/api/v1/operations/${first.body.operationId}/resolve`, {
      key: keys.admin,
      body: { outcome: "retry", reason: "the provider shows nothing: try again" },
    });
    expect(retry.status, retry.text).toBe(200);
    const second = await claim(app.baseUrl, keys.agent, idem, { tool: name, args: { amount: 700 } });
    expect(second.status, second.text).toBe(201);
    expect(second.body.attempt.number).toBe(2);
    await endLease(app.db, first.body.operationId);

    const probed = await waitFor("attempt 2's probe", async () => (await probesOf(2))[0]);
    expect(probed.after).toMatchObject({ probe: 1, verdict: "not_found", resolved: "no" });
    // The budget is the one booked under attempt 2's token.
    expect(await operation(first.body.operationId)).toMatchObject({ state: "unknown", probeCount: 1, probeBudgetToken: BigInt(second.body.attempt.fencingToken) });
  });

  // The fresh budget is read from the token, not made by a trigger: a BEFORE UPDATE row trigger
  // locks the old row (and writes WAL for it) on every update of operation, the protocol's too.
  it("no row trigger runs before updates of operation", async () => {
    const rows = await app.db.$queryRaw<{ tgname: string }[]>`
      SELECT tgname FROM pg_trigger WHERE tgrelid = 'operation'::regclass AND NOT tgisinternal
        AND tgtype & 1 = 1 AND tgtype & 2 = 2 AND tgtype & 16 = 16`;
    expect(rows).toEqual([]);
  });

  // A probe booked for attempt 1's unknown, then an operator's retry and attempt 2 whose lease
  // ran out: attempt 1's answer must not settle attempt 2. The tool has no probe of its own, so
  // the worker stays out of the way, and the test plays the probe pass's last step.
  it("a verdict settles only the attempt it was booked for: a stale one is recorded and settles nothing", async () => {
    const name = "pay.fenced";
    expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "deduplicated", maxAttempts: 3 } } })).status).toBe(201);
    const idem = `idem-${randomUUID()}`;
    const first = await claim(app.baseUrl, keys.agent, idem, { tool: name, args: { amount: 800 } });
    expect(first.status).toBe(201);
    const id: string = first.body.operationId;
    const token1 = BigInt(first.body.attempt.fencingToken);
    const reported = await call(app.baseUrl, "POST", `/api/v1/operations/${id}/complete`, { key: keys.agent, body: { fencingToken: first.body.attempt.fencingToken, outcome: "unknown" } });
    expect(reported.status, reported.text).toBe(200);
    const retry = await call(app.baseUrl, "POST", `/api/v1/operations/${id}/resolve`, { key: keys.admin, body: { outcome: "retry", reason: "nothing at the provider yet" } });
    expect(retry.status, retry.text).toBe(200);
    const second = await claim(app.baseUrl, keys.agent, idem, { tool: name, args: { amount: 800 } });
    expect(second.status, second.text).toBe(201);
    // Attempt 2's lease runs out; the takeover policy leaves it processing for the next claim.
    await endLease(app.db, id);

    const record = (token: bigint, probeNumber: number) =>
      app.db.$queryRaw<{ r: { code: string } }[]>`
        SELECT tollgate_record_probe(${keys.tenantId}, ${id}, ${token}::bigint, ${probeNumber}, 'succeeded', 200::int,
          ${`probe ${probeNumber}: GET https://provider.example/charges answered 200`}, 'ch_old', '{}', NULL::int) AS r`;
    expect((await record(token1, 3))[0]!.r.code).toBe("stale");
    const op = await operation(id);
    // The operator's retry was about attempt 1; attempt 2 holds no resolution (the audit keeps it).
    expect(op).toMatchObject({ state: "processing", resolution: null });
    const stale = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: id, action: "operation.probed" } });
    expect(stale.after).toMatchObject({ probe: 3, verdict: "succeeded", resolved: "stale", attempt: 1 });
    const trace = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: id });
    expect(trace!.timeline.map((e) => e.title)).toContain(
      "Probe 3 found the effect, but it asked about attempt 1 and the operation has moved on: nothing settled",
    );

    // Attempt 2 reports unknown: attempt 1's answer is still stale, attempt 2's own settles it.
    const token2: string = second.body.attempt.fencingToken;
    expect((await call(app.baseUrl, "POST", `/api/v1/operations/${id}/complete`, { key: keys.agent, body: { fencingToken: token2, outcome: "unknown" } })).status).toBe(200);
    expect((await record(token1, 4))[0]!.r.code).toBe("stale");
    expect(await operation(id)).toMatchObject({ state: "unknown" });
    expect((await record(BigInt(token2), 1))[0]!.r.code).toBe("resolved");
    expect(await operation(id)).toMatchObject({ state: "succeeded", resolution: { via: "probe", resourceId: "ch_old" } });
  });

  it("a probe recorded after the operation was settled says so on the trace, and changes nothing", async () => {
    const { id, token } = await unknownOperation("pay.settled-first", 810);
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${id}/resolve`, { key: keys.admin, body: { outcome: "failed", reason: "the provider says declined" } });
    expect(resolved.status, resolved.text).toBe(200);
    const r = await app.db.$queryRaw<{ r: { code: string } }[]>`
      SELECT tollgate_record_probe(${keys.tenantId}, ${id}, ${token}::bigint, 1, 'not_found', 404::int,
        'probe 1: GET https://provider.example/charges answered 404', NULL, '{}', NULL::int) AS r`;
    expect(r[0]!.r.code).toBe("recorded");
    expect(await operation(id)).toMatchObject({ state: "failed", resolution: { via: "operator" } });
    const trace = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: id });
    expect(trace!.timeline.filter((e) => e.kind === "probe").map((e) => [e.title, e.tone])).toEqual([
      ["Probe 1 found nothing, but the operation was already settled: nothing changed", "info"],
    ]);
  });

  // A probe that asked nothing for a reason of the server's or the tool's is tried again at the
  // cap for as long as the reason lasts; the audit log (and the trace) gets the reason once.
  it("an uncounted skip is recorded only when the latest probe record is not already the same skip; every one is retried", async () => {
    const { id, token, idem } = await unknownOperation("pay.skipping", 820);
    const keyGone = "probe 1: the probe's headers cannot be opened with this server's TOLLGATE_SECRET_KEY; not counted against maxProbes; tried again in 3600 s";
    const invalid = "probe 1: the tool's probe definition is not valid (at url): PUT the tool again; not counted against maxProbes; tried again in 3600 s";
    const record = async (t: bigint, verdict: string, summary: string, counted: boolean) => {
      // As the probe pass does: booked (counted, scheduled) first, then recorded.
      await app.db.$executeRaw`UPDATE operation SET probe_count = probe_count + 1, next_probe_at = now() WHERE id = ${id}`;
      const rows = await app.db.$queryRaw<{ r: { code: string } }[]>`
        SELECT tollgate_record_probe(${keys.tenantId}, ${id}, ${t}::bigint, 1, ${verdict}, NULL::int, ${summary}, NULL, NULL,
          ${counted ? null : 3600}::int) AS r`;
      expect(rows[0]!.r.code).toBe("recorded");
    };
    const recorded = async () =>
      (await app.db.auditEvent.findMany({ where: { targetId: id, action: "operation.probed" }, orderBy: { id: "asc" } })).map((a) => [
        (a.after as { attempt: number }).attempt,
        a.reason,
      ]);

    await record(token, "skipped", keyGone, false);
    const before = await operation(id);
    await record(token, "skipped", keyGone, false);
    // Not written, but retried all the same: not counted, and the next try an hour from now.
    expect(await recorded()).toEqual([[1, keyGone]]);
    const after = await operation(id);
    expect(after.probeCount).toBe(0);
    expect(after.nextProbeAt!.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect(after.nextProbeAt!.getTime()).toBeGreaterThanOrEqual(before.nextProbeAt!.getTime());

    await record(token, "skipped", invalid, false); // another reason
    await record(token, "skipped", invalid, false);
    await record(token, "inconclusive", "probe 1: GET https://provider.example/charges failed: connection refused", true);
    await record(token, "skipped", invalid, false); // after a probe that was sent
    await record(token, "skipped", invalid, false);
    expect(await recorded()).toEqual([
      [1, keyGone],
      [1, invalid],
      [1, "probe 1: GET https://provider.example/charges failed: connection refused"],
      [1, invalid],
    ]);

    // A new episode (an operator's retry, attempt 2 reported unknown) shows its reason again.
    expect((await call(app.baseUrl, "POST", `/api/v1/operations/${id}/resolve`, { key: keys.admin, body: { outcome: "retry", reason: "again" } })).status).toBe(200);
    const second = await claim(app.baseUrl, keys.agent, idem, { tool: "pay.skipping", args: { amount: 820 } });
    expect(second.status, second.text).toBe(201);
    const reported = await call(app.baseUrl, "POST", `/api/v1/operations/${id}/complete`, { key: keys.agent, body: { fencingToken: second.body.attempt.fencingToken, outcome: "unknown" } });
    expect(reported.status, reported.text).toBe(200);
    await record(BigInt(second.body.attempt.fencingToken), "skipped", invalid, false);
    await record(BigInt(second.body.attempt.fencingToken), "skipped", invalid, false);
    expect((await recorded()).slice(4)).toEqual([[2, invalid]]);
  });

  // Rolling deploys: a worker still running the code from before probes carried their token calls
  // the 8-argument function. It keeps working (its pass does not fail) and settles nothing.
  it("the 8-argument tollgate_record_probe of older workers records the probe as stale and settles nothing", async () => {
    const { id } = await unknownOperation("pay.old-worker", 830);
    // The call exactly as the older worker's code makes it.
    const probeNumber = 2;
    const status = 200;
    const summary = "probe 2: GET https://provider.example/charges answered 200: the provider has the effect (resolved by probe: succeeded)";
    const rows = await app.db.$queryRaw<{ r: { code: string } }[]>`
      SELECT tollgate_record_probe(${keys.tenantId}, ${id}, ${probeNumber}, ${"succeeded"}, ${status}::int, ${summary},
        ${"ch_old_worker"}, ${"{}"}) AS r`;
    expect(rows[0]!.r.code).toBe("stale");
    expect(await operation(id)).toMatchObject({ state: "unknown", resolution: null, result: null });
    const probed = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: id, action: "operation.probed" } });
    expect(probed.after).toMatchObject({ probe: 2, verdict: "succeeded", resolved: "stale", attempt: null, counted: true });
    expect(probed.reason).toBe(summary);
    const trace = await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: id });
    expect(trace!.timeline.filter((e) => e.kind === "probe").map((e) => e.title)).toEqual([
      "Probe 2 found the effect, but it was recorded by a worker running older code, which does not say what attempt it asked about: nothing settled",
    ]);
    expect(trace!.resolvable).toBe(true);
  });
});

// Review, 2026-12-02 (evening): a probe's "failed" went straight to tollgate_resolve, past the
// rules that keep a weaker "failed" from burying evidence (an agent's failed complete, a
// webhook's failed event): side effects that may have happened, a provider's "succeeded". The
// tools here have no probe of their own: the test plays the probe pass's last step.
describe("a probe's verdict against the evidence", () => {
  const record = (id: string, token: bigint, probeNumber: number, verdict: string) =>
    app.db.$queryRaw<{ r: { code: string } }[]>`
      SELECT tollgate_record_probe(${keys.tenantId}, ${id}, ${token}::bigint, ${probeNumber}, ${verdict}, 200::int,
        ${`probe ${probeNumber}: GET https://provider.example/charges answered 200`}, NULL, '{}', NULL::int) AS r`.then((rows) => rows[0]!.r.code);
  const probeTitles = async (id: string) =>
    (await getOperationTrace({ db: app.db, tenantId: keys.tenantId, operationId: id }))!.timeline.filter((e) => e.kind === "probe").map((e) => [e.title, e.tone]);

  async function claimed(name: string, amount: number) {
    const put = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy: { leaseSeconds: 60, takeover: "never", maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } } } });
    expect([200, 201]).toContain(put.status);
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: name, args: { amount } });
    expect(c.status, c.text).toBe(201);
    const id: string = c.body.operationId;
    const token: string = c.body.attempt.fencingToken;
    const complete = (body: Record<string, unknown>) => call(app.baseUrl, "POST", `/api/v1/operations/${id}/complete`, { key: keys.agent, body: { fencingToken: token, ...body } });
    return { id, token: BigInt(token), tokenText: token, complete };
  }

  it("failed, after the agent reported failed with its charge sent (so unknown): flagged once, stays unknown; a probe that finds the charge settles it", async () => {
    const op = await claimed("pay.sent-then-failed", 900);
    const sent = await call(app.baseUrl, "PUT", `/api/v1/operations/${op.id}/side-effects/charge`, { key: keys.agent, body: { fencingToken: op.tokenText, provider: "pay", state: "sent" } });
    expect(sent.status, sent.text).toBe(200);
    const reported = await op.complete({ outcome: "failed", error: { code: "declined", message: "declined" } });
    expect([reported.status, reported.body.state], reported.text).toEqual([200, "unknown"]);

    expect(await record(op.id, op.token, 1, "failed")).toBe("recorded");

    const flagged = await operation(op.id);
    expect(flagged).toMatchObject({ state: "unknown", resolution: null, flagReason: "probe 1 says failed, but side effects may have happened (charge: sent)" });
    expect(flagged.flaggedAt).not.toBeNull();
    const probed = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: op.id, action: "operation.probed" } });
    expect(probed.after).toMatchObject({ probe: 1, verdict: "failed", resolved: "contradicting", contradicts: "side effects may have happened (charge: sent)" });
    expect(await probeTitles(op.id)).toEqual([
      ["Probe 1 said the call failed, but side effects may have happened (charge: sent): not applied, the operation stays unknown (flagged)", "bad"],
    ]);
    // The next probe says the same: the flag a person may be reading is not raised again.
    expect(await record(op.id, op.token, 2, "failed")).toBe("recorded");
    expect(await operation(op.id)).toMatchObject({ state: "unknown", flaggedAt: flagged.flaggedAt, flagReason: flagged.flagReason });
    // One that finds the charge settles it.
    expect(await record(op.id, op.token, 3, "succeeded")).toBe("resolved");
    expect(await operation(op.id)).toMatchObject({ state: "succeeded", resolution: { via: "probe" } });
  });

  it("failed, after a provider's succeeded stopped a retry (so unknown): flagged, stays unknown, and the succeeded event can still be matched", async () => {
    const secret = newStandardSecret();
    const { connectionId } = await createConnection(app.baseUrl, keys.admin, "pay-events", { scheme: "standard-webhooks", secrets: [secret] });
    const op = await claimed("pay.retry-stopped", 910);
    const failed = await op.complete({ outcome: "failed", retryable: true, error: { code: "timeout", message: "no answer" } });
    expect([failed.status, failed.body.state], failed.text).toEqual([200, "pending"]);
    const event = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.created", op.id)));
    expect([event.status, event.body.status], event.text).toEqual([200, "contradicting"]);
    expect((await operation(op.id)).state).toBe("unknown");

    expect(await record(op.id, op.token, 1, "failed")).toBe("recorded");

    expect(await operation(op.id)).toMatchObject({ state: "unknown", resolution: null, flagReason: `probe 1 says failed, but webhook ${event.body.eventId} said succeeded` });
    const matched = await matchWebhookEvent({
      db: app.db,
      tenantId: keys.tenantId,
      eventId: event.body.eventId,
      input: { operationId: op.id, outcome: "succeeded", eventStatus: "contradicting" },
      actor: "user:ops@example.test",
    });
    expect(matched.state).toBe("succeeded");
  });

  it("a conclusive verdict against an outcome settled meanwhile flags the operation and changes nothing", async () => {
    const { id, token } = await unknownOperation("pay.settled-other-way", 920);
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${id}/resolve`, { key: keys.admin, body: { outcome: "failed", reason: "the provider says declined" } });
    expect(resolved.status, resolved.text).toBe(200);

    expect(await record(id, token, 1, "succeeded")).toBe("recorded");

    expect(await operation(id)).toMatchObject({ state: "failed", resolution: { via: "operator" }, flagReason: "probe 1 says succeeded, but the operation is failed" });
    expect(await probeTitles(id)).toEqual([["Probe 1 found the effect, but the operation is failed: nothing changed (flagged)", "bad"]]);
  });
});
