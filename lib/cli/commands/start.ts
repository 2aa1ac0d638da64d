import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createDb, type Db } from "@/lib/db";
import { egressAllow } from "@/lib/env";
import { openDatabase } from "@/lib/cli/database";
import { ensureBuild } from "@/lib/cli/ensure-build";
import { nextServerArgs } from "@/lib/cli/next-server-args";
import { onStopSignal } from "@/lib/cli/on-stop-signal";
import { serverSecret } from "@/lib/cli/local-secret";
import { assertSameSecretKey } from "@/lib/cli/secret-key-check";
import { redactDatabaseUrl } from "@/lib/cli/redact-database-url";
import { localDir, migrationsDir, projectRoot, shownPath } from "@/lib/cli/paths";
import { migrate } from "@/lib/db/migrate";
import { seedDemo, type DemoCredentials } from "@/lib/seed/seed-demo";
import { firstTenantHelp, shouldSeedDemo } from "@/lib/cli/demo-seed-policy";
import { CliError, parseFlags } from "@/lib/cli/commands/run-command";
import { portProblem } from "@/lib/cli/port-problem";
import { workerLog } from "@/lib/cli/commands/worker";
import { superviseWorker } from "@/lib/worker/supervise-worker";

const credentialsFile = path.join(localDir, "credentials");

const say = (msg: string) => process.stdout.write(`${msg}\n`);

// npm start: database (embedded unless DATABASE_URL), migrations, demo seed on an empty
// database (the embedded one; DATABASE_URL's only with TOLLGATE_DEMO=1: demo-seed-policy.ts), a
// build if the sources changed, then `next start` and the background worker (in this process).
// Ctrl-C stops everything.
export async function start(args: string[]): Promise<number> {
  return serve(args, "start");
}

export async function dev(args: string[]): Promise<number> {
  return serve(args, "dev");
}

async function serve(args: string[], mode: "start" | "dev"): Promise<number> {
  parseFlags(args, {});
  const allow = egressAllow();
  // Checked before anything starts: a mistyped TOLLGATE_DEMO stops here, not after the migrations.
  const seed = shouldSeedDemo({ embedded: !process.env.DATABASE_URL, setting: process.env.TOLLGATE_DEMO });
  const port = Number(process.env.PORT ?? 3000);
  const taken = await portProblem(port);
  if (taken) throw new CliError(taken);
  const database = await openDatabase({ log: quietPostgres });
  say(database.embedded ? `Embedded PostgreSQL: ${redactDatabaseUrl(database.url)} (data in ${shownPath(path.join(localDir, "postgres"))})` : `PostgreSQL: ${redactDatabaseUrl(database.url)}`);
  let worker: { stop: () => Promise<void> } | undefined;
  let next: ChildProcess | undefined;
  let stopping = false;
  // Stopping the embedded PostgreSQL ends every connection still open with FATAL 57P01 ("terminating
  // connection due to administrator command"). A pool that kept an idle client (graphile-worker's,
  // Prisma's adapter) emits that as an 'error' nobody listens to, which crashed the process with
  // code 1 instead of the signal's (seen once in CI). While stopping, that one error is expected.
  process.on("uncaughtException", (error: Error & { code?: string }) => {
    if (stopping && error.code === "57P01") return;
    process.stderr.write(`${error.stack ?? String(error)}\n`);
    // Next.js is a child with a port and a pool of its own: exiting without it left it serving, on
    // a database no registered user owns any more (the next command to close it stops it).
    next?.kill("SIGTERM");
    process.exit(1);
  });
  const stop = onceAsync(async () => {
    stopping = true;
    // Next first (it may still be serving if it never became healthy), then the worker and the
    // database under it. Next is waited for: its requests in flight finish on a live database
    // rather than failing with 57P01 halfway through a claim's transaction.
    if (next) await stopChild(next, 10_000);
    await worker?.stop();
    await database.close();
  });
  // From here on, not only once Next is up: a Ctrl-C during the migrations or the build stops the
  // embedded PostgreSQL too.
  onStopSignal((signal) => void stop().then(() => process.exit(signal === "SIGINT" ? 130 : 143)));
  try {
    const { applied } = await migrate({ databaseUrl: database.url, migrationsDir });
    if (applied.length) say(`Applied ${applied.length} migration(s).`);
    await assertSameSecretKey(database.url, serverSecret());
    const db = createDb(database.url, 2);
    const { credentials, tenants } = await seedOrCount(db, seed).finally(() => db.$disconnect());
    // Saved at once: the seed runs once, and a start that fails after it (a build that breaks, a
    // Ctrl-C during the build) would otherwise lose the only copy of the keys.
    if (credentials) {
      saveCredentials(credentials, port);
      say(`Seeded the demo tenant; its credentials are saved to ${shownPath(credentialsFile)} and shown once Tollgate is up.`);
    }
    // The build the server below serves: NEXT_DIST_DIR's when set (next start reads it too).
    if (mode === "start") ensureBuild({ distDir: process.env.NEXT_DIST_DIR || undefined, log: say });
    worker = superviseWorker({ databaseUrl: database.url, serverSecret: serverSecret(), settings: { egressAllow: allow }, log: workerLog() });
    const child = spawnNext(mode, port, database.url);
    next = child;
    // A Ctrl-C while Next.js comes up stops it; the answers it gave meanwhile are no reason to say
    // it is up, nor to show the keys.
    if (!(await waitForHealth(port, child, () => stopping))) {
      await stop();
      return 130;
    }
    say(`\nTollgate is up: http://localhost:${port}  (API at http://localhost:${port}/api/v1, health at /api/health)`);
    if (credentials) say(`\nThe demo tenant's keys, shown once (also saved to ${shownPath(credentialsFile)}, mode 0600):\n${credentialsText(credentials, port)}`);
    else if (tenants === 0) say(`\n${firstTenantHelp}`);
    else if (seed) say(`Existing data kept; the demo's credentials are in ${shownPath(credentialsFile)} (saved when it was seeded).`);
    else say("Existing data kept.");
    const code = await new Promise<number>((resolve) => child.once("exit", (c) => resolve(c ?? 0)));
    await stop();
    return code;
  } catch (error) {
    await stop();
    throw error;
  }
}

// SIGTERM, then SIGKILL if the child has not exited within `graceMs`; resolves once it has exited.
async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

async function seedOrCount(db: Db, seed: boolean): Promise<{ credentials: DemoCredentials | null; tenants: number }> {
  const credentials = seed ? await seedDemo({ db, secret: serverSecret() }) : null;
  return { credentials, tenants: credentials ? 1 : await db.tenant.count() };
}

function spawnNext(mode: "start" | "dev", port: number, databaseUrl: string): ChildProcess {
  return spawn(process.execPath, nextServerArgs(mode, port), {
    cwd: projectRoot,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, DATABASE_URL: databaseUrl, TOLLGATE_SECRET_KEY: serverSecret(), NEXT_TELEMETRY_DISABLED: "1" },
  });
}

// True once healthy; false when stopping began first.
async function waitForHealth(port: number, next: ChildProcess, stopping: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (stopping()) return false;
    if (next.exitCode !== null) throw new Error(`next exited with code ${next.exitCode} before becoming healthy`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (res.ok) return !stopping();
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("Tollgate did not become healthy within 120 s");
}

function credentialsText(c: DemoCredentials, port: number): string {
  return [
    `console: http://localhost:${port}/signin  email ${c.consoleEmail}  password ${c.consolePassword}`,
    `tenant: ${c.tenant}`,
    `admin API key: ${c.adminKey}`,
    `agent API key: ${c.agentKey}`,
    "",
    "For the README's examples:",
    `  export ADMIN_KEY=${c.adminKey} AGENT_KEY=${c.agentKey}`,
    "Try (claim a demo tool; run it twice: the second answer is 409 operation-in-progress while the first holds the lease):",
    `  curl -s -X POST http://localhost:${port}/api/v1/operations -H "Authorization: Bearer $AGENT_KEY" -H "Content-Type: application/json" -H "Idempotency-Key: try-1" -d '{"tool":"tickets.create","args":{"title":"Printer on fire"}}'`,
  ].join("\n");
}

// The folder may not exist yet (a fresh clone started on DATABASE_URL makes nothing else there
// first). A file that cannot be written at all is said, with the keys, rather than lose them.
function saveCredentials(c: DemoCredentials, port: number): void {
  try {
    mkdirSync(path.dirname(credentialsFile), { recursive: true });
    writeFileSync(credentialsFile, `${credentialsText(c, port)}\n`, { mode: 0o600 });
  } catch (error) {
    say(`Could not save the demo's credentials to ${shownPath(credentialsFile)} (${(error as NodeJS.ErrnoException).code ?? "error"}); here they are, once:\n${credentialsText(c, port)}`);
    throw error;
  }
}

// PostgreSQL's own routine log lines (checkpoints, shutdown) are noise on a console; problems are not.
function quietPostgres(msg: string): void {
  if (!msg.startsWith("postgres: ") || /\b(ERROR|FATAL|PANIC)\b/.test(msg)) say(msg);
}


function onceAsync(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}
