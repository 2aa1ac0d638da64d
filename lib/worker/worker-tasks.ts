import type { JobHelpers, Task, TaskList } from "graphile-worker";
import type { Db } from "@/lib/db";
import { expireDueApprovals } from "@/lib/approvals/expire-approvals";
import type { GuardedFetch } from "@/lib/http/egress";
import { deliverEvent } from "@/lib/outbox/deliver-event";
import { pruneOutbox } from "@/lib/outbox/prune-outbox";
import { pruneOperations } from "@/lib/operations/prune-operations";
import { closeSettledAttempts, reapExpiredLeases } from "@/lib/operations/reap-expired-leases";
import { runDueProbes } from "@/lib/probes/run-due-probes";
import { pruneWebhookPayloads } from "@/lib/webhooks/prune-webhook-payloads";
import { pruneEndedSessions } from "@/lib/auth/ended-sessions";
import { pruneSignInFailures } from "@/lib/auth/sign-in-throttle";
import type { WorkerSettings } from "@/lib/worker/worker-settings";
import { cleanUpJobQueue } from "@/lib/jobs/clean-up-job-queue";
import { onePassAtATime } from "@/lib/worker/one-pass-at-a-time";

export type WorkerLog = (level: "info" | "warn" | "error", msg: string, fields?: object) => void;

// Jobs that repeat every few seconds: each run first books the next run (same job key, so there
// is only ever one waiting, whichever worker runs it), then does its work unless a pass of the
// same job is still running (onePassAtATime); a failed run is logged and the next one comes anyway.
export const periodicTasks = ["reap-leases", "probe-unknown", "recover-jobs"] as const;

// Every job but a delivery is maintenance (the reaper, probes, the recovery sweep, approval
// expiry, pruning) and is queued at this priority; deliveries keep graphile-worker's default 0.
// The library takes due jobs by priority, then run_at (smaller first): at the same priority a
// backlog of deliveries due before the reaper's next run (each try of an unanswering receiver
// holding a slot for its timeout) delayed leases, probes and the sweep by minutes to hours.
// Every place that queues a maintenance job passes it: add_job's ON CONFLICT sets the priority
// too, so a booking without it would put the chain back at 0.
export const MAINTENANCE_PRIORITY = -10;

// Jobs on the library's crontab (minute resolution is plenty for these).
export const crontab = [
  `* * * * * expire-approvals ?max=1&priority=${MAINTENANCE_PRIORITY}`,
  `17 * * * * prune ?max=1&priority=${MAINTENANCE_PRIORITY}`,
].join("\n");

// `fetch` is the worker's outbound HTTP (one connection pool behind its egress policy).
export function workerTasks(options: {
  db: Db;
  databaseUrl: string;
  settings: WorkerSettings;
  serverSecret: string;
  fetch: GuardedFetch;
  log: WorkerLog;
}): TaskList {
  const { db, settings, log, fetch } = options;
  const every: Record<(typeof periodicTasks)[number], number> = {
    "reap-leases": settings.tickSeconds,
    "probe-unknown": settings.tickSeconds,
    "recover-jobs": settings.recoverEverySeconds,
  };
  const periodic = (name: (typeof periodicTasks)[number], work: () => Promise<object | null>): Task => async (_payload, helpers) => {
    await scheduleNext(helpers, name, every[name]);
    await onePassAtATime(helpers, name, async () => {
      try {
        const result = await work();
        if (result) log("info", name, result);
      } catch (error) {
        log("error", `${name} failed`, { err: error instanceof Error ? error.message : String(error) });
      }
    });
  };

  return {
    "deliver-event": async (payload) => {
      const deliveryId = (payload as { deliveryId?: unknown } | null)?.deliveryId;
      if (typeof deliveryId !== "string") return;
      const { result, status, error } = await deliverEvent({ db, deliveryId, settings: settings.delivery, serverSecret: options.serverSecret, fetch });
      // Why, in Tollgate's own words (refused by the egress policy, a timeout, DNS); a receiver's
      // answer is named by its status only: its body is theirs, and may echo event data (code review).
      if (result !== "delivered" && result !== "skipped") log("warn", `delivery ${result}`, { deliveryId, status: status ?? null, error: status ? null : (error ?? null) });
    },
    "reap-leases": periodic("reap-leases", async () => {
      const unknown = await reapExpiredLeases({ db, graceSeconds: settings.leaseGraceSeconds });
      const closed = await closeSettledAttempts({ db, graceSeconds: settings.leaseGraceSeconds });
      return unknown || closed ? { becameUnknown: unknown, settledAttemptsClosed: closed } : null;
    }),
    "probe-unknown": periodic("probe-unknown", async () => {
      const { probed, resolved } = await runDueProbes({ db, fetch, serverSecret: options.serverSecret, settings: settings.probes });
      return probed ? { probed, resolved } : null;
    }),
    "recover-jobs": periodic("recover-jobs", async () => {
      const released = await db.$queryRaw<{ ids: string[] }[]>`SELECT tollgate_release_abandoned_jobs(${Math.ceil(settings.abandonedAfterSeconds)}::int) AS ids`;
      const requeued = await db.$queryRaw<{ n: number }[]>`SELECT tollgate_requeue_stalled_deliveries(${Math.ceil(settings.abandonedAfterSeconds)}::int, 1000) AS n`;
      const deadWorkers = released[0]?.ids ?? [];
      const stalled = requeued[0]?.n ?? 0;
      // A periodic chain whose job died with its worker before booking the next run starts again.
      await ensurePeriodicJobs(db);
      return deadWorkers.length || stalled ? { deadWorkers, stalledDeliveries: stalled } : null;
    }),
    "expire-approvals": async () => {
      const expired = await expireDueApprovals(db);
      if (expired) log("info", "expire-approvals", { expired });
    },
    prune: async () => {
      const { deleted } = await pruneOperations({ db });
      const payloads = await pruneWebhookPayloads(db);
      const events = await pruneOutbox({ db, retentionDays: settings.outboxRetentionDays });
      const sessions = (await pruneEndedSessions(db)) + (await pruneSignInFailures(db));
      await cleanUpJobQueue(options.databaseUrl);
      log("info", "prune", { operations: deleted, webhookPayloads: payloads, outboxEvents: events, endedSessions: sessions });
    },
  };
}

async function scheduleNext(helpers: JobHelpers, name: string, seconds: number): Promise<void> {
  await helpers.query(
    "SELECT graphile_worker.add_job($1, '{}'::json, run_at => now() + make_interval(secs => $2), job_key => $1, max_attempts => 1, priority => $3::int)",
    [name, seconds, MAINTENANCE_PRIORITY],
  );
}

// Each worker makes sure every periodic chain exists when it starts; an existing waiting job
// keeps its time ("preserve_run_at"), so starting more workers never adds runs; a chain booked
// before maintenance had its priority is raised by the first worker that starts.
export async function ensurePeriodicJobs(db: Db): Promise<void> {
  for (const name of periodicTasks) {
    await db.$queryRaw`SELECT 1 FROM graphile_worker.add_job(${name}, '{}'::json, job_key => ${name}, max_attempts => 1, priority => ${MAINTENANCE_PRIORITY}::int, job_key_mode => 'preserve_run_at')`;
  }
}
