import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, claim } from "../support/http";
import { startEventReceiver, type EventReceiver } from "../support/event-receiver";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { fastWorkerFlags, startWorkerProcess, type WorkerProcess } from "../support/worker-process";
import { waitFor } from "../support/wait-for";

// Workers die and run side by side. A worker SIGKILLed in the middle of deliveries leaves its
// jobs locked; the next worker finds the dead owner (its liveness lock is gone), releases them,
// and every event is delivered: none lost, the duplicates (requests the receiver got but the
// dead worker never saw answered) carrying the same webhook-id. Two workers at once run each job
// exactly once.

let app: TestApp;
const receivers: EventReceiver[] = [];
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  for (const w of workers) await w.kill();
  for (const r of receivers) await r.stop();
  await app?.stop();
});

async function setup(slug: string, events: string[]): Promise<{ keys: TenantKeys; receiver: EventReceiver; tool: string }> {
  const keys = await seedTenant(app.db, slug);
  const receiver = await startEventReceiver();
  receivers.push(receiver);
  const sub = await call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/feed", { key: keys.admin, body: { url: receiver.url, events } });
  expect(sub.status, sub.text).toBe(201);
  const tool = `${slug}.tool`;
  expect((await call(app.baseUrl, "PUT", `/api/v1/tools/${tool}`, { key: keys.admin, body: { policy: { leaseSeconds: 1, takeover: "never" } } })).status).toBe(201);
  return { keys, receiver, tool };
}

async function succeed(keys: TenantKeys, tool: string): Promise<void> {
  const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool, args: { n: randomUUID() } });
  expect(c.status, c.text).toBe(201);
  const done = await call(app.baseUrl, "POST", `/api/v1/operations/${c.body.operationId}/complete`, {
    key: keys.agent,
    body: { fencingToken: c.body.attempt.fencingToken, outcome: "succeeded" },
  });
  expect(done.status, done.text).toBe(200);
}

async function start(flags: string[] = fastWorkerFlags): Promise<WorkerProcess> {
  const w = await startWorkerProcess(app.url, flags);
  workers.push(w);
  return w;
}

const deliveries = (tenantId: string) => app.db.eventDelivery.findMany({ where: { tenantId } });
const counts = (ids: string[]) => ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>());

describe("a worker killed mid-delivery", () => {
  it("after a restart every event is delivered, none lost; the re-sent ones carry the same webhook-id", async () => {
    const { keys, receiver, tool } = await setup("crash", ["operation.succeeded"]);
    receiver.answer(() => "hang");
    // A long delivery timeout: the hung tries must still be the first three when the worker is
    // killed, however long the six claims and completes below take (with 3 s, one could time out
    // and be retried as a fourth).
    const first = await start([...fastWorkerFlags, "--concurrency", "3", "--delivery-timeout-ms", "60000"]);
    for (let i = 0; i < 6; i++) await succeed(keys, tool);
    await waitFor("three deliveries in flight", () => receiver.hung() === 3);

    await first.kill();

    const inFlight = receiver.received().map((r) => r.webhookId);
    expect(new Set(inFlight).size).toBe(3);
    const locked = await app.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE locked_by = ${first.poolId}`;
    expect(locked[0]!.n).toBeGreaterThanOrEqual(3);
    receiver.answer(() => 200);

    const second = await start();
    await waitFor("all delivered", async () => (await deliveries(keys.tenantId)).every((d) => d.state === "delivered"), 30_000);

    const events = await app.db.outboxEvent.findMany({ where: { tenantId: keys.tenantId } });
    expect(events).toHaveLength(6);
    const received = counts(receiver.received().map((r) => r.webhookId));
    // None lost: every event reached the receiver.
    expect([...received.keys()].sort()).toEqual(events.map((e) => e.id).sort());
    // The three the dead worker had sent came again, with the same id; the others exactly once.
    for (const id of inFlight) expect(received.get(id)).toBe(2);
    for (const e of events.filter((e) => !inFlight.includes(e.id))) expect(received.get(e.id)).toBe(1);
    // The dead worker's jobs were released by the new one, not left for graphile-worker's 4 hours
    // (its log line comes after the release, so it may trail the deliveries a little).
    await waitFor("the release logged", () => second.logs.join("\n").includes(first.poolId));
    const stillLocked = await app.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE locked_by = ${first.poolId}`;
    expect(stillLocked[0]!.n).toBe(0);
    expect(await second.stop()).toBe(0);
  });
});

describe("a worker that loses its database connection", () => {
  it("stops taking jobs and exits non-zero, for its supervisor to restart it", async () => {
    const w = await start();
    const killed = await app.db.$queryRaw<{ n: number }[]>`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE application_name = 'tollgate-worker-liveness' AND datname = current_database()`;
    expect(killed[0]!.n).toBe(1);
    const code = await new Promise<number | null>((resolve) => {
      if (w.process.exitCode !== null) resolve(w.process.exitCode);
      else w.process.once("exit", (c) => resolve(c));
    });
    expect(code).toBe(1);
    expect(w.logs.join("\n")).toContain("lost its liveness connection");
  });
});

describe("two workers at once", () => {
  it("run each job exactly once: every delivery one try, every expired lease reaped once", async () => {
    const { keys, receiver, tool } = await setup("pair", ["operation.succeeded", "operation.unknown"]);
    const [a, b] = await Promise.all([start(), start()]);
    const abandoned: string[] = [];
    for (let i = 0; i < 4; i++) {
      const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool, args: { abandoned: i } });
      expect(c.status).toBe(201);
      abandoned.push(c.body.operationId);
    }
    for (let i = 0; i < 20; i++) await succeed(keys, tool);

    await waitFor("24 deliveries delivered", async () => {
      const all = await deliveries(keys.tenantId);
      return all.length === 24 && all.every((d) => d.state === "delivered");
    }, 30_000);
    // Give a duplicate every chance to show up before counting.
    await new Promise((r) => setTimeout(r, 1500));

    const received = counts(receiver.received().map((r) => r.webhookId));
    expect(received.size).toBe(24);
    expect([...received.values()].every((n) => n === 1)).toBe(true);
    expect((await deliveries(keys.tenantId)).every((d) => d.attempts === 1)).toBe(true);
    for (const id of abandoned) {
      const audits = await app.db.auditEvent.findMany({ where: { targetId: id, action: "operation.unknown" } });
      expect(audits.map((x) => x.actor)).toEqual(["system:lease-reaper"]);
    }
    const unknownEvents = await app.db.outboxEvent.count({ where: { tenantId: keys.tenantId, type: "operation.unknown" } });
    expect(unknownEvents).toBe(4);
    // One runnable chain per periodic job, however many workers started it (a run cut short by a
    // dead worker stays behind as a failed job until the hourly clean-up). Counted with both
    // workers stopped: a run in progress holds its chain's only row locked until it books the next.
    expect(await a.stop()).toBe(0);
    expect(await b.stop()).toBe(0);
    const periodic = await app.db.$queryRaw<{ task: string; n: number }[]>`
      SELECT task_identifier AS task, count(*)::int AS n FROM graphile_worker.jobs
      WHERE task_identifier IN ('reap-leases', 'probe-unknown', 'recover-jobs') AND locked_at IS NULL AND attempts < max_attempts
      GROUP BY 1 ORDER BY 1`;
    expect(periodic).toEqual([
      { task: "probe-unknown", n: 1 },
      { task: "reap-leases", n: 1 },
      { task: "recover-jobs", n: 1 },
    ]);
  });
});

// Worker review: recover-jobs restarts the other periodic chains, but nothing restarted it once
// its own job died with a worker (SIGKILL after taking it, before booking the next run): the dead
// workers' jobs then stayed locked for graphile-worker's 4 hours.
describe("the recovery chain itself", () => {
  it("comes back when its job died with a worker: a live worker books it again, and the dead worker's job is freed", async () => {
    const w = await start();
    const dead = `dead-pool-${randomUUID()}`;
    // The waiting recover-jobs job, taken by a worker that died at once: locked by a pool whose
    // liveness lock nobody holds, its one try spent.
    await waitFor(
      "a waiting recover-jobs job",
      async () => {
        const taken = await app.db.$executeRaw`
          UPDATE graphile_worker._private_jobs j SET locked_by = ${dead}, locked_at = now() - interval '1 hour', attempts = j.max_attempts
          FROM graphile_worker._private_tasks t
          WHERE t.id = j.task_id AND t.identifier = 'recover-jobs' AND j.locked_at IS NULL AND j.attempts < j.max_attempts`;
        return taken > 0 ? true : null;
      },
      10_000,
      20,
    );
    await waitFor(
      "the dead worker's job freed by a recover-jobs run",
      async () => {
        const [row] = await app.db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE locked_by = ${dead}`;
        return Number(row!.n) === 0 ? true : null;
      },
      10_000,
      100,
    );
    await w.stop();
  });
});
