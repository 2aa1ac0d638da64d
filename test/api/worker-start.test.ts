import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { holdLivenessLock } from "@/lib/worker/liveness-lock";
import { onePassAtATime } from "@/lib/worker/one-pass-at-a-time";
import { startWorker } from "@/lib/worker/run-worker";
import { startTestApp, TEST_SECRET, type TestApp } from "../support/test-app";
import { startTcpProxy } from "../support/tcp-proxy";
import { waitFor } from "../support/wait-for";

// A worker whose start fails after its job runner began (the liveness lock could not be taken:
// PostgreSQL restarting, too many connections) must leave no runner behind: one would go on
// taking jobs without the lock, and any worker's recovery sweep would run those jobs again.

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});

const connections = async (): Promise<number> => {
  const rows = await app.db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
  return Number(rows[0]?.n ?? 0);
};

// A worker started with this lock taker, and the messages it logs.
function startWith(holdLock: NonNullable<Parameters<typeof startWorker>[0]["holdLock"]>): { started: ReturnType<typeof startWorker>; logs: string[] } {
  const logs: string[] = [];
  const started = startWorker({ databaseUrl: app.url, serverSecret: TEST_SECRET, settings: { concurrency: 2 }, log: (_level, message) => logs.push(message), holdLock });
  return { started, logs };
}

describe("a worker that cannot take its liveness lock", () => {
  it("fails to start and stops the job runner it had begun, with its connections", async () => {
    const before = await connections();

    const { started, logs } = startWith(() => Promise.reject(new Error("too many connections")));

    await expect(started).rejects.toThrow("too many connections");
    // The runner's pool (its LISTEN connection among them) and the worker's Prisma pool are gone.
    await waitFor("the worker's connections closed", async () => ((await connections()) <= before ? true : null), 10_000);
    expect(logs).not.toContain("worker started");
  });

  it("a lock connection that reports its loss while the lock is being taken stops the worker once, without a crash", async () => {
    const before = await connections();

    const { started, logs } = startWith((lock) => {
      lock.onLost(new Error("Connection terminated unexpectedly"));
      return Promise.reject(new Error("too many connections"));
    });

    await expect(started).rejects.toThrow("too many connections");
    await waitFor("the worker's connections closed", async () => ((await connections()) <= before ? true : null), 10_000);
    expect(logs).toContain("worker lost its liveness connection; stopping");
  });
});

// Worker review: the lock's connection sent nothing after taking the lock, so one that died
// silently (a NAT's idle timeout, a vanished primary) raised no error: the lock was gone at the
// server, and the worker went on taking jobs that every other worker's sweep ran again beside it.
describe("a liveness connection that goes silent", () => {
  it("is noticed within the check's interval and timeout, and lets go without waiting for an answer", async () => {
    const url = new URL(app.url);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    try {
      const lost: Error[] = [];
      const lock = await holdLivenessLock({ databaseUrl: proxy.url(app.url), poolId: `silent-${process.pid}`, onLost: (e) => lost.push(e), checkEveryMs: 200, checkTimeoutMs: 500 });
      await new Promise((r) => setTimeout(r, 700));
      expect(lost).toEqual([]); // a live connection answers every check
      proxy.stall();
      const stalledAt = Date.now();
      await waitFor("the loss noticed", async () => (lost.length > 0 ? true : null), 5_000, 50);
      expect(Date.now() - stalledAt).toBeLessThan(2_000);
      expect(lost).toHaveLength(1);
      const releasing = Date.now();
      await lock.release();
      expect(Date.now() - releasing).toBeLessThan(3_500);
    } finally {
      await proxy.close();
    }
  });
});

// Worker review: periodic jobs book their next run before they work, so a pass longer than the
// tick (the probes under a slow provider) had the next passes start beside it, each taking a
// worker slot from deliveries. One pass of a kind runs at a time, on any worker.
describe("periodic passes", () => {
  it("run one at a time per kind, on any worker; the lock goes with a pass's end, or with its connection", async () => {
    const pool = new pg.Pool({ connectionString: app.url, max: 4 });
    pool.on("error", () => undefined); // the connection this test terminates on purpose
    const helpers = {
      withPgClient: async <T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
        const client = await pool.connect();
        client.on("error", () => undefined);
        try {
          return await fn(client);
        } finally {
          client.release();
        }
      },
    } as unknown as Parameters<typeof onePassAtATime>[0];
    try {
      const gate: { finish?: () => void; die?: () => void } = {};
      const long = onePassAtATime(helpers, "probe-unknown", () => new Promise<void>((resolve) => (gate.finish = resolve)));
      await waitFor("the long pass holds its lock", async () => (gate.finish ? true : null), 5_000, 10);
      expect(await onePassAtATime(helpers, "probe-unknown", async () => undefined)).toBe("skipped");
      expect(await onePassAtATime(helpers, "reap-leases", async () => undefined)).toBe("ran"); // another kind
      gate.finish!();
      expect(await long).toBe("ran");
      expect(await onePassAtATime(helpers, "probe-unknown", async () => undefined)).toBe("ran");

      // A worker that dies mid-pass: its connection ends, and the lock with it.
      const killed = onePassAtATime(helpers, "probe-unknown", async () => {
        await app.db.$executeRaw`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = ${0x50617373}::oid AND granted`;
        await new Promise<void>((resolve) => (gate.die = resolve));
      });
      await waitFor("the pass's connection ended", async () => (gate.die ? true : null), 5_000, 10);
      expect(await onePassAtATime(helpers, "probe-unknown", async () => undefined)).toBe("ran");
      gate.die!();
      await killed.catch(() => undefined);
    } finally {
      await pool.end();
    }
  });
});
