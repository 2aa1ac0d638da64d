import { EventEmitter } from "node:events";
import { Logger, run, type Runner, type WorkerEvents } from "graphile-worker";
import { createDb } from "@/lib/db";
import { egressPolicy, guardedFetch } from "@/lib/http/egress";
import { holdLivenessLock } from "@/lib/worker/liveness-lock";
import { defaultWorkerSettings, type WorkerSettings } from "@/lib/worker/worker-settings";
import { crontab, ensurePeriodicJobs, workerTasks, type WorkerLog } from "@/lib/worker/worker-tasks";

export type RunningWorker = {
  poolId: string;
  // Settles when the worker stops (after stop(), or on a fatal error).
  done: Promise<void>;
  // Graceful: no new jobs; running ones finish (up to 5 s, then they are released to run again).
  stop: () => Promise<void>;
};

// The background worker: outbox delivery, the lease reaper, reconciliation probes, approval
// expiry, pruning, and the recovery sweep. Jobs live in PostgreSQL (graphile-worker): any number
// of worker processes may run against one database, each job is taken by one of them
// (SELECT … FOR UPDATE SKIP LOCKED inside the library), and a job whose worker died is
// released by the recovery sweep and runs again. Every job is written to be safe to run twice.
export async function startWorker(options: {
  databaseUrl: string;
  serverSecret: string;
  settings?: Partial<WorkerSettings>;
  log: WorkerLog;
  // The liveness lock's taker (tests put one in that fails).
  holdLock?: typeof holdLivenessLock;
}): Promise<RunningWorker> {
  const settings: WorkerSettings = { ...defaultWorkerSettings, ...options.settings };
  const { log } = options;
  const db = createDb(options.databaseUrl, Math.max(4, settings.concurrency + 2));
  const fetch = guardedFetch(egressPolicy(settings.egressAllow));

  const events: WorkerEvents = new EventEmitter() as WorkerEvents;
  let poolId: string | undefined;
  events.on("pool:create", ({ workerPool }) => {
    poolId = workerPool.id;
  });
  let runner: Runner;
  try {
    await ensurePeriodicJobs(db);
    runner = await run({
      connectionString: options.databaseUrl,
      concurrency: settings.concurrency,
      maxPoolSize: settings.concurrency + 2,
      pollInterval: settings.pollIntervalMs,
      noHandleSignals: true,
      taskList: workerTasks({ db, databaseUrl: options.databaseUrl, settings, serverSecret: options.serverSecret, fetch, log }),
      crontab,
      logger: bridgeLogger(log),
      events,
    });
  } catch (error) {
    await db.$disconnect();
    await fetch.close();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  let liveness: Awaited<ReturnType<typeof holdLivenessLock>> | undefined;
  const chains: { timer?: NodeJS.Timeout } = {}; // set once the lock is held
  // Defined before the lock is taken: the lock's connection may report its loss at any moment.
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(chains.timer);
      await runner.stop().catch((error: unknown) => log("warn", "worker stop", { err: String(error) }));
      await liveness?.release();
      await db.$disconnect();
      await fetch.close();
    })());
  let id: string;
  try {
    if (!poolId) throw new Error("graphile-worker started without announcing its pool");
    id = poolId;
    liveness = await (options.holdLock ?? holdLivenessLock)({
      databaseUrl: options.databaseUrl,
      poolId: id,
      // Without the lock another worker would soon treat our jobs as abandoned: stop taking jobs.
      onLost: (error) => {
        log("error", "worker lost its liveness connection; stopping", { err: error.message });
        void stop();
      },
    });
  } catch (error) {
    // The runner is taking jobs already. Left running without the lock, it would go on working
    // while the recovery sweep (any worker's) released its jobs as abandoned and ran them a second
    // time beside it, and the supervisor's next start would add another runner.
    await stop();
    throw error;
  }

  // Each periodic chain books its own next run, and recover-jobs restarts the others; nothing
  // restarted recover-jobs itself once its job died (a SIGKILL between taking it and booking the
  // next run, or a booking that failed: periodic jobs are tried once), until a worker started.
  // So every live worker makes sure the chains exist on a timer of its own, as at its start; a
  // waiting job keeps its time, a dead or failed one is replaced.
  chains.timer = setInterval(() => {
    ensurePeriodicJobs(db).catch((error: unknown) => log("warn", "periodic jobs check failed", { err: error instanceof Error ? error.message : String(error) }));
  }, settings.recoverEverySeconds * 1000);
  chains.timer.unref();

  const done = runner.promise.then(
    async () => {
      await stop();
    },
    async (error: unknown) => {
      log("error", "worker failed", { err: error instanceof Error ? error.message : String(error) });
      await stop();
      throw error;
    },
  );
  log("info", "worker started", { poolId: id, concurrency: settings.concurrency, tickSeconds: settings.tickSeconds });
  return { poolId: id, done, stop };
}

function bridgeLogger(log: WorkerLog): Logger {
  return new Logger(() => (level, message, meta) => {
    if (level === "error") log("error", `job queue: ${message}`, meta ? { meta: String(meta.error ?? "") } : undefined);
    else if (level === "warning") log("warn", `job queue: ${message}`);
  });
}
