import { EventEmitter } from "node:events";
import pg from "pg";
import { Logger, run, type Runner, type TaskList, type WorkerEvents } from "graphile-worker";
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
  // A connection for each slot of the two runners below, and one to spare.
  const db = createDb(options.databaseUrl, Math.max(4, settings.concurrency + 3));
  const fetch = guardedFetch(egressPolicy(settings.egressAllow));
  const tasks = workerTasks({ db, databaseUrl: options.databaseUrl, settings, serverSecret: options.serverSecret, fetch, log });

  // Two job runners. Maintenance outranks deliveries (MAINTENANCE_PRIORITY), but a priority
  // only picks the job a free slot takes next: with every slot held by deliveries to receivers
  // that accept and never answer, the reaper still waited a delivery timeout (10 s by default,
  // up to 120 s) at every turn, and leases last seconds. So beside the `concurrency` slots that
  // take any job, one slot of its own takes every job but a delivery. Simpler ways fail: the
  // library has no per-task concurrency, a delivery that gave its slot back would have to be
  // requeued (another try, another backoff), and a named queue would run one delivery at a time
  // in the whole fleet. It costs a second small pool; the liveness connection holds a lock for
  // each runner's pool id, so the recovery sweep treats both as one live (or dead) worker.
  // Not the hourly prune either: its batches can take minutes, and the slot is for the short,
  // time-critical passes (the reaper above all). Prune runs in the main runner, at its priority.
  const LONG_OR_DELIVERY = new Set(["deliver-event", "prune"]);
  const maintenanceTaskList: TaskList = Object.fromEntries(Object.entries(tasks).filter(([name]) => !LONG_OR_DELIVERY.has(name)));
  const runners: { runner: Runner; poolId: string }[] = [];
  // Each runner's connections, owned here: graphile-worker ends a pool it made itself after taking
  // its error listener off, and a connection the server ended in between (the embedded server
  // stopping as this process exits, a restart) was an unhandled 'error': the process crashed
  // with exit code 1 on a clean shutdown (seen in CI, 2026-12-03). These keep their listener to
  // the end and are ended after the runners have stopped.
  const pgPools: pg.Pool[] = [];
  const startRunner = async (runnerOptions: { concurrency: number; taskList: TaskList; crontab?: string }) => {
    const events: WorkerEvents = new EventEmitter() as WorkerEvents;
    const pool: { id?: string } = {};
    events.on("pool:create", ({ workerPool }) => {
      pool.id = workerPool.id;
    });
    const pgPool = new pg.Pool({ connectionString: options.databaseUrl, max: runnerOptions.concurrency + 2 });
    // An idle connection's error (the server ended it): the pool drops that connection, and the
    // next query opens another; a lasting outage is the liveness lock's to notice.
    pgPool.on("error", (error: Error) => log("warn", "job queue connection lost", { err: error.message }));
    pgPools.push(pgPool);
    const runner = await run({
      pgPool,
      ...runnerOptions,
      pollInterval: settings.pollIntervalMs,
      noHandleSignals: true,
      logger: bridgeLogger(log),
      events,
    });
    // Listed before the check, so a failed start stops this runner too.
    runners.push({ runner, poolId: pool.id ?? "" });
    if (!pool.id) throw new Error("graphile-worker started without announcing its pool");
  };
  let stopping: Promise<void> | undefined;
  let liveness: Awaited<ReturnType<typeof holdLivenessLock>> | undefined;
  const chains: { timer?: NodeJS.Timeout } = {}; // set once the lock is held
  // Defined before the lock is taken: the lock's connection may report its loss at any moment.
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(chains.timer);
      await Promise.all(runners.map(({ runner }) => runner.stop().catch((error: unknown) => log("warn", "worker stop", { err: String(error) }))));
      await Promise.all(pgPools.map((p) => p.end().catch((error: unknown) => log("warn", "job queue pool end", { err: String(error) }))));
      await liveness?.release();
      await db.$disconnect();
      await fetch.close();
    })());
  try {
    await ensurePeriodicJobs(db);
    await startRunner({ concurrency: settings.concurrency, taskList: tasks, crontab });
    // crontab "": no schedule of its own (else graphile reads a ./crontab file if one is there).
    await startRunner({ concurrency: 1, taskList: maintenanceTaskList, crontab: "" });
    liveness = await (options.holdLock ?? holdLivenessLock)({
      databaseUrl: options.databaseUrl,
      poolId: runners.map((r) => r.poolId),
      // Without the lock another worker would soon treat our jobs as abandoned: stop taking jobs.
      onLost: (error) => {
        log("error", "worker lost its liveness connection; stopping", { err: error.message });
        void stop();
      },
    });
  } catch (error) {
    // A runner may be taking jobs already. Left running without the lock, it would go on working
    // while the recovery sweep (any worker's) released its jobs as abandoned and ran them a second
    // time beside it, and the supervisor's next start would add another runner.
    await stop();
    throw error;
  }
  const id = runners[0]!.poolId;

  // Each periodic chain books its own next run, and recover-jobs restarts the others; nothing
  // restarted recover-jobs itself once its job died (a SIGKILL between taking it and booking the
  // next run, or a booking that failed: periodic jobs are tried once), until a worker started.
  // So every live worker makes sure the chains exist on a timer of its own, as at its start; a
  // waiting job keeps its time, a dead or failed one is replaced.
  chains.timer = setInterval(() => {
    ensurePeriodicJobs(db).catch((error: unknown) => log("warn", "periodic jobs check failed", { err: error instanceof Error ? error.message : String(error) }));
  }, settings.recoverEverySeconds * 1000);
  chains.timer.unref();

  // Either runner ending (stopped, or a fatal error) stops the worker.
  const done = Promise.all(
    runners.map(({ runner }) =>
      runner.promise.then(
        async () => {
          await stop();
        },
        async (error: unknown) => {
          log("error", "worker failed", { err: error instanceof Error ? error.message : String(error) });
          await stop();
          throw error;
        },
      ),
    ),
  ).then(() => undefined);
  log("info", "worker started", { poolId: id, maintenancePoolId: runners[1]!.poolId, concurrency: settings.concurrency, tickSeconds: settings.tickSeconds });
  return { poolId: id, done, stop };
}

function bridgeLogger(log: WorkerLog): Logger {
  return new Logger(() => (level, message, meta) => {
    if (level === "error") log("error", `job queue: ${message}`, meta ? { meta: String(meta.error ?? "") } : undefined);
    else if (level === "warning") log("warn", `job queue: ${message}`);
  });
}
