import { randomUUID } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { parseCrontab } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultDeliverySettings } from "@/lib/outbox/delivery-settings";
import { startWorker, type RunningWorker } from "@/lib/worker/run-worker";
import { crontab, MAINTENANCE_PRIORITY, periodicTasks } from "@/lib/worker/worker-tasks";
import { call, claim } from "../support/http";
import { seedTenant, startTestApp, TEST_SECRET, type TenantKeys, type TestApp } from "../support/test-app";
import { waitFor } from "../support/wait-for";

// Worker review: one slow receiver starved every tenant's deliveries and all maintenance. The
// deliveries and the periodic jobs shared one priority, so the lease reaper's next run waited
// behind every delivery due before it, each try of a receiver that accepts and never answers
// holding a slot for the delivery timeout. Here one slot, a 15 s timeout and a backlog of ten
// deliveries to such a receiver: minutes of deliveries, and an expired lease must still become
// unknown within a tick or two. (The timeout is long on purpose: with priorities alone the
// reaper would still wait for the try holding the only slot; the maintenance slot is tested too.)

const BACKLOG = 10;
const DELIVERY_TIMEOUT_MS = 15_000;

let app: TestApp;
let keys: TenantKeys;
let hole: BlackHole;
let worker: RunningWorker | undefined;
let workerStartedAt: Date;
const logs: string[] = [];

// A receiver that accepts every connection and never answers (nor reads, nor closes).
type BlackHole = { url: string; connections: () => number; close: () => Promise<void> };
async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    connections: () => accepted,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

async function putTool(name: string, policy: object): Promise<string> {
  const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy } });
  expect(res.status, res.text).toBe(201);
  return name;
}

beforeAll(async () => {
  app = await startTestApp();
  hole = await startBlackHole();
  keys = await seedTenant(app.db, "prio");
  const sub = await call(app.baseUrl, "PUT", "/api/v1/event-subscriptions/slow", { key: keys.admin, body: { url: hole.url, events: ["operation.succeeded"] } });
  expect(sub.status, sub.text).toBe(201);
  // The backlog: deliveries due now, queued before the worker (and its periodic jobs) start.
  const tool = await putTool("p.quick", {});
  for (let i = 0; i < BACKLOG; i++) {
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool, args: { i } });
    expect(c.status, c.text).toBe(201);
    const done = await call(app.baseUrl, "POST", `/api/v1/operations/${c.body.operationId}/complete`, {
      key: keys.agent,
      body: { fencingToken: c.body.attempt.fencingToken, outcome: "succeeded", result: { statusCode: 201, resourceId: `T-${i}` } },
    });
    expect(done.status, done.text).toBe(200);
  }
  workerStartedAt = (await app.db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`)[0]!.now;
  worker = await startWorker({
    databaseUrl: app.url,
    serverSecret: TEST_SECRET,
    settings: {
      concurrency: 1,
      tickSeconds: 0.5,
      recoverEverySeconds: 1,
      pollIntervalMs: 250,
      delivery: { ...defaultDeliverySettings, timeoutMs: DELIVERY_TIMEOUT_MS },
      egressAllow: ["127.0.0.1/32"],
    },
    log: (level, message, fields) => logs.push(`${level} ${message} ${fields ? JSON.stringify(fields) : ""}`),
  });
}, 60_000);

afterAll(async () => {
  // The receiver goes first: the try in flight fails at once and the worker stops without waiting.
  await hole?.close();
  await worker?.stop();
  await app?.stop();
});

describe("maintenance before deliveries", () => {
  it("an expired lease becomes unknown within a tick or two while a receiver that never answers holds every delivery slot, behind a backlog", async () => {
    await waitFor("a delivery hanging on the receiver", () => hole.connections() >= 1, 10_000, 50);
    const never = await putTool("p.never", { leaseSeconds: 1, takeover: "never" });
    const c = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: never, args: {} });
    expect(c.status, c.text).toBe(201);
    const claimedAt = Date.now();

    // Lease 1 s + tick 0.5 s + poll; the slot is held for 15 s by one try and the backlog is 10 tries.
    await waitFor(
      "the operation unknown",
      async () => (await app.db.operation.findUniqueOrThrow({ where: { id: c.body.operationId } })).state === "unknown",
      4_000,
      50,
    );
    expect(Date.now() - claimedAt).toBeLessThan(4_000);
    // The one delivery slot was held all along: the reaper did not wait for a free one.
    expect(hole.connections()).toBe(1);
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: c.body.operationId, action: "operation.unknown" } });
    expect(audit.actor).toBe("system:lease-reaper");
  });

  it("every maintenance job is queued ahead of deliveries (periodic chains, their bookings, the crontab); deliveries keep priority 0", async () => {
    // Each chain rebooked by a run of its own (scheduleNext), not only by the worker's start.
    await waitFor(
      "every periodic chain rebooked since the worker started",
      async () => {
        const rows = await app.db.$queryRaw<{ n: number }[]>`
          SELECT count(DISTINCT task_identifier)::int AS n FROM graphile_worker.jobs
          WHERE task_identifier = ANY(${[...periodicTasks]}::text[]) AND created_at > ${workerStartedAt}`;
        return rows[0]?.n === periodicTasks.length;
      },
      5_000,
    );
    const jobs = await app.db.$queryRaw<{ task: string; priority: number }[]>`
      SELECT task_identifier AS task, priority::int AS priority FROM graphile_worker.jobs ORDER BY 1`;
    const periodic = jobs.filter((j) => (periodicTasks as readonly string[]).includes(j.task));
    expect(new Set(periodic.map((j) => j.task))).toEqual(new Set(periodicTasks));
    expect(periodic.every((j) => j.priority === MAINTENANCE_PRIORITY)).toBe(true);
    const deliveries = jobs.filter((j) => j.task === "deliver-event");
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((j) => j.priority === 0)).toBe(true);
    expect(MAINTENANCE_PRIORITY).toBeLessThan(0);

    const cron = parseCrontab(crontab);
    expect(cron.map((item) => item.task).sort()).toEqual(["expire-approvals", "prune"]);
    expect(cron.every((item) => item.options.priority === MAINTENANCE_PRIORITY)).toBe(true);
  });
});
