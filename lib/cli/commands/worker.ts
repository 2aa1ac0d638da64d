import { openDatabase } from "@/lib/cli/database";
import { onStopSignal } from "@/lib/cli/on-stop-signal";
import { serverSecret } from "@/lib/cli/local-secret";
import { assertSameSecretKey } from "@/lib/cli/secret-key-check";
import { migrationsDir } from "@/lib/cli/paths";
import { CliError, parseFlags } from "@/lib/cli/commands/run-command";
import { migrate } from "@/lib/db/migrate";
import { egressAllow } from "@/lib/env";
import { log } from "@/lib/log";
import { defaultWorkerSettings, type WorkerSettings } from "@/lib/worker/worker-settings";
import { startWorker, type RunningWorker } from "@/lib/worker/run-worker";
import type { WorkerLog } from "@/lib/worker/worker-tasks";

const flags = {
  concurrency: { type: "string" },
  "tick-seconds": { type: "string" },
  "abandoned-after-seconds": { type: "string" },
  "recover-every-seconds": { type: "string" },
  "delivery-base-ms": { type: "string" },
  "delivery-cap-ms": { type: "string" },
  "delivery-window-seconds": { type: "string" },
  "delivery-timeout-ms": { type: "string" },
  "probe-base-seconds": { type: "string" },
  "probe-cap-seconds": { type: "string" },
  "poll-interval-ms": { type: "string" },
} as const;

// npm run worker: the background worker until SIGTERM/SIGINT, then a graceful stop (running
// jobs finish or are released). Several may run at once against one database.
export async function workerCommand(args: string[]): Promise<number> {
  const settings = { ...parseSettings(parseFlags(args, flags).values), egressAllow: egressAllow() };
  const database = await openDatabase();
  try {
    await migrate({ databaseUrl: database.url, migrationsDir });
    await assertSameSecretKey(database.url, serverSecret());
    const worker = await startWorker({ databaseUrl: database.url, serverSecret: serverSecret(), settings, log: workerLog() });
    // The handlers first, then the line that says so: a supervisor (or a test) that reads it and
    // sends SIGTERM at once found none yet now and then, and Node's default ended the process on
    // the spot, skipping the graceful stop (seen once in CI).
    const signalled = untilSignal(worker);
    process.stdout.write(`Tollgate worker ${worker.poolId} is running (Ctrl-C or SIGTERM stops it gracefully).\n`);
    // A worker that stops on its own (its database connection died) exits non-zero, for the supervisor to restart it.
    return (await signalled) ? 0 : 1;
  } finally {
    await database.close();
  }
}

// `npm start` runs the worker inside its own process, next to the web server.
export function workerLog(): WorkerLog {
  const logger = log().child({ component: "worker" });
  return (level, msg, fields) => logger[level](fields ?? {}, msg);
}

async function untilSignal(worker: RunningWorker): Promise<boolean> {
  const signalled = await new Promise<boolean>((resolve) => {
    onStopSignal(() => resolve(true));
    worker.done.then(
      () => resolve(false),
      () => resolve(false),
    );
  });
  await worker.stop();
  return signalled;
}

function parseSettings(values: Partial<Record<keyof typeof flags, string>>): Partial<WorkerSettings> {
  const n = (flag: keyof typeof flags, min: number, max: number): number | undefined => {
    const raw = values[flag];
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) throw new CliError(`--${flag} must be a number from ${min} to ${max}`);
    return value;
  };
  const d = defaultWorkerSettings;
  return {
    concurrency: n("concurrency", 1, 64) ?? d.concurrency,
    tickSeconds: n("tick-seconds", 0.2, 3600) ?? d.tickSeconds,
    abandonedAfterSeconds: n("abandoned-after-seconds", 1, 86_400) ?? d.abandonedAfterSeconds,
    recoverEverySeconds: n("recover-every-seconds", 0.2, 3600) ?? d.recoverEverySeconds,
    pollIntervalMs: n("poll-interval-ms", 50, 60_000) ?? d.pollIntervalMs,
    delivery: {
      baseMs: n("delivery-base-ms", 1, 3_600_000) ?? d.delivery.baseMs,
      capMs: n("delivery-cap-ms", 1, 86_400_000) ?? d.delivery.capMs,
      windowSeconds: n("delivery-window-seconds", 1, 30 * 86_400) ?? d.delivery.windowSeconds,
      timeoutMs: n("delivery-timeout-ms", 100, 120_000) ?? d.delivery.timeoutMs,
    },
    probes: {
      ...d.probes,
      baseSeconds: n("probe-base-seconds", 1, 86_400) ?? d.probes.baseSeconds,
      capSeconds: n("probe-cap-seconds", 1, 86_400) ?? d.probes.capSeconds,
    },
  };
}
