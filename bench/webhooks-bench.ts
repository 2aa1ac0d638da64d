// `npm run bench -- webhooks [options]`: verified webhook ingests per second at concurrency 1
// and 16 with p50/p99, each beside a run of the liveness route (GET /api/live) at the same
// concurrency measured right before it, on a real `next start` with wrk (as the protocol bench).
// Issue 5's targets: ingests ≥ 0.6× the liveness route's req/s at c=16, and a p50 within 2 ms of
// its p50 at c=1, each judged on the median over --rounds rounds run in alternating orders.
//
// Scenarios (every request a real Standard Webhooks delivery signed beforehand with the
// `standardwebhooks` library, so wrk only replays bytes):
//   settle     a new event naming a processing operation: verify, store, match, settle (the full path)
//   unmatched  a new event naming nothing: verify, store for the inbox
//   duplicate  a redelivery of a stored event: verify, answer { duplicate: true }
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { createDb } from "@/lib/db";
import { ensureBuild, inputsDigest } from "@/lib/cli/ensure-build";
import { putWebhookConnection } from "@/lib/webhooks/put-webhook-connection";
import { webhookConnectionRequestSchema } from "@/lib/webhooks/webhook-schemas";
import { BUSY_CORES, CpuSampler, leastDisturbed, type CpuShares } from "./cpu";
import { createDatabase, DEFAULT_SERVER_URL, dropDatabase, prepareWorld, type BenchWorld } from "./database";
import { claimBatch } from "./fixtures";
import { resultsDir } from "./protocol-bench";
import { serverCounters, startServer, type BenchServer } from "./server";
import { median } from "./stats";
import { ensureWrk, runWrk, wrkThreads } from "./wrk";

type Scenario = "live" | "settle" | "unmatched" | "duplicate";
const SCENARIOS: { id: Scenario; label: string }[] = [
  { id: "live", label: "liveness GET /api/live" },
  { id: "settle", label: "ingest → matched, settles a processing operation" },
  { id: "unmatched", label: "ingest → unmatched, stored for the inbox" },
  { id: "duplicate", label: "redelivery → 200 duplicate" },
];
const CONCURRENCIES = [1, 16];
const DUPLICATE_POOL = 1000;

type Options = { seconds: number; warmupSeconds: number; attempts: number; rounds: number; keepDb: boolean };
type Measurement = {
  scenario: Scenario;
  // Which round of the ingest scenarios (0 for the liveness rows at the start).
  round: number;
  concurrency: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  unexpected: Record<string, number>;
  exhausted: boolean;
  sqlPerRequest: number | null;
  cpu: CpuShares;
  // The liveness run at the same concurrency measured right before this one (as in the protocol
  // bench): the host's speed drifts over a run, and a ratio to a liveness run minutes earlier
  // measures the drift as much as the route. Liveness rows themselves have none.
  pair?: { rps: number; p50Ms: number; others: number };
};

const USAGE = `usage: npm run bench -- webhooks [--seconds N] [--warmup N] [--attempts N] [--keep-db]
  --seconds N   measured seconds per run (default 5)
  --warmup N    warm-up seconds before each run (default 1)
  --attempts N  measure a run again, up to N times in all, when other processes used > ${BUSY_CORES} cores (default 2)
  --rounds N    rounds of the ingest scenarios, each in the reverse order of the one before (default 2); targets use the median
  --keep-db     do not drop the bench database at the end
DATABASE_URL picks the PostgreSQL server (default: the server of ${DEFAULT_SERVER_URL}).`;

function parseArgs(argv: string[]): Options {
  const o: Options = { seconds: 5, warmupSeconds: 1, attempts: 2, rounds: 2, keepDb: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const value = () => {
      const n = Number(argv[++i]);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`${arg} needs a positive number\n${USAGE}`);
      return n;
    };
    if (arg === "--seconds") o.seconds = value();
    else if (arg === "--warmup") o.warmupSeconds = value();
    else if (arg === "--attempts") o.attempts = Math.round(value());
    else if (arg === "--rounds") o.rounds = Math.round(value());
    else if (arg === "--keep-db") o.keepDb = true;
    else if (arg === "-h" || arg === "--help") throw new Error(USAGE);
    else throw new Error(`unknown argument: ${arg}\n${USAGE}`);
  }
  return o;
}

type Ctx = {
  world: BenchWorld;
  pool: pg.Pool;
  server: BenchServer;
  dbName: string;
  scratch: string;
  connectionId: string;
  signer: Webhook;
  options: Options;
  log: (m: string) => void;
  runId: string;
  liveRps: Map<number, number>;
  duplicatesFile: string;
};

export async function runWebhooksBench(argv: string[]): Promise<number> {
  let options: Options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return argv.includes("--help") || argv.includes("-h") ? 0 : 2;
  }
  const log = (m: string) => process.stderr.write(`[webhooks-bench] ${m}\n`);
  const out = (s = "") => process.stdout.write(`${s}\n`);
  const startedAt = new Date();
  const loadBefore = loadavg();
  ensureWrk(log);
  const { distDir } = ensureBuild({ distDir: path.join(".tollgate", "next-bench", inputsDigest().slice(0, 16)), log });
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const dbName = `tollgate_whbench_${startedAt.toISOString().replace(/[-:TZ.]/g, "").slice(0, 14)}_${process.pid}`;
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((e: unknown) => log(`cleanup: ${String(e)}`));
  };
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const scratch = mkdtempSync(path.join(tmpdir(), "tollgate-whbench-"));
  cleanups.push(async () => rmSync(scratch, { recursive: true, force: true }));
  try {
    const databaseUrl = await createDatabase(serverUrl, dbName);
    if (!options.keepDb) cleanups.push(() => dropDatabase(serverUrl, dbName));
    const world = await prepareWorld(databaseUrl);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: "tollgate-webhooks-bench" });
    cleanups.push(() => pool.end());
    const serverSecret = `bench-${randomBytes(24).toString("hex")}`;
    const webhookSecret = `whsec_${randomBytes(32).toString("base64")}`;
    const db = createDb(databaseUrl, 2);
    const { connection } = await putWebhookConnection({
      db,
      tenantId: world.tenantId,
      name: "bench-tickets",
      input: webhookConnectionRequestSchema.parse({
        scheme: "standard-webhooks",
        secrets: [webhookSecret],
        correlation: { path: "data.metadata.tollgate_operation" },
        outcomes: { "ticket.created": "succeeded", "ticket.rejected": "failed" },
      }),
      actor: "bench",
      origin: "http://bench.invalid",
      serverSecret,
    });
    await db.$disconnect();
    const server = await startServer({ databaseUrl, distDir, secret: serverSecret });
    cleanups.push(() => server.stop());
    log(`next start on ${server.baseUrl} (pid ${server.pid}); connection ${connection.connectionId}`);
    const ctx: Ctx = {
      world,
      pool,
      server,
      dbName,
      scratch,
      connectionId: connection.connectionId,
      signer: new Webhook(webhookSecret),
      options,
      log,
      runId: randomBytes(4).toString("hex"),
      liveRps: new Map(),
      duplicatesFile: "",
    };
    ctx.duplicatesFile = await storedDuplicates(ctx);
    await warmUp(ctx);
    const measurements: Measurement[] = [];
    for (const c of CONCURRENCIES) measurements.push(await measureLeastDisturbed(ctx, "live", c, 0));
    const ingest = SCENARIOS.map((s) => s.id).filter((id) => id !== "live");
    for (let round = 0; round < options.rounds; round++) {
      // Each round runs the scenarios in the reverse order of the one before: where a scenario
      // stands in the run moved its ratio by up to 0.1 (settle and unmatched swapped PASS and
      // FAIL when only their order was swapped), and the median over both orders cancels that.
      for (const id of round % 2 === 0 ? ingest : [...ingest].reverse()) {
        for (const c of CONCURRENCIES) {
          const pair = await measureLeastDisturbed(ctx, "live", c, round);
          const kept = await measureLeastDisturbed(ctx, id, c, round);
          kept.pair = { rps: pair.rps, p50Ms: pair.p50Ms, others: pair.cpu.others };
          measurements.push(kept);
        }
      }
    }
    const checks = targets(measurements);
    const finishedAt = new Date();
    const result = {
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      machine: { cpus: cpus().length, node: process.version, loadBefore, loadAfter: loadavg() },
      options,
      measurements,
      targets: checks,
    };
    const file = path.join(resultsDir(), `webhooks-${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + "\n");

    out();
    out(`## Tollgate webhooks benchmark — ${result.startedAt} (${((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(0)} s)`);
    out(`${cpus().length} CPUs, Node ${process.version}; wrk, ${options.seconds} s per run after ${options.warmupSeconds} s warm-up; load average before ${loadBefore.map((l) => l.toFixed(2)).join(" ")}`);
    out();
    out(table(measurements));
    out();
    out(`### Targets (against the GET /api/live run measured right before each; median of ${options.rounds} round${options.rounds === 1 ? "" : "s"})`);
    for (const c of checks) out(`${c.pass ? "PASS" : "FAIL"}${c.disturbed ? "*" : " "} ${c.text}`);
    if (checks.some((c) => c.disturbed)) out(`* measured while other processes used more than ${BUSY_CORES} cores: not conclusive.`);
    out();
    out(`results: ${path.relative(process.cwd(), file)}`);
    out(`reproduce: npm run bench -- webhooks --seconds ${options.seconds} --warmup ${options.warmupSeconds} --attempts ${options.attempts} --rounds ${options.rounds}`);
    return checks.every((c) => c.pass) ? 0 : 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await cleanup();
  }
}

// One signed delivery per line, for the Lua script. Timestamps are "now": files are written
// right before their run, well inside the connection's 300 s tolerance.
function writeEvents(ctx: Ctx, name: string, correlations: (string | null)[]): string {
  const at = new Date();
  const ts = Math.floor(at.getTime() / 1000);
  const lines = correlations.map((op, i) => {
    const id = `msg_${name}_${i}`;
    const body = JSON.stringify({
      type: "ticket.created",
      timestamp: at.toISOString(),
      data: { ticket: { id: `T-${i}`, title: "Printer on fire" }, metadata: op ? { tollgate_operation: op } : {} },
    });
    return `${id}\t${ts}\t${ctx.signer.sign(id, at, body)}\t${body}`;
  });
  const file = path.join(ctx.scratch, `${name}.tsv`);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

// Enough deliveries that a run cannot run out: no route is faster than liveness, so 1.25×
// liveness req/s × seconds (never fewer than 300).
function batchSize(ctx: Ctx, concurrency: number, seconds: number): number {
  return Math.max(300, Math.ceil((ctx.liveRps.get(concurrency) ?? 1200) * 1.25 * Math.max(1, seconds)) + 100);
}

async function eventsFor(ctx: Ctx, scenario: Scenario, name: string, n: number): Promise<string> {
  if (scenario === "settle") {
    const claimed = await claimBatch(ctx.pool, ctx.world, `${name}-`, n);
    return writeEvents(ctx, name, claimed.map((c) => c.operationId));
  }
  return writeEvents(ctx, name, Array.from({ length: n }, () => null));
}

// The duplicate pool: deliveries stored once (each posted exactly once, 4 at a time, by this
// process), then replayed by wrk as redeliveries. (Rounds of wrk started over at the first line
// each time, so a slow host never got past the first few hundred.)
async function storedDuplicates(ctx: Ctx): Promise<string> {
  const file = writeEvents(ctx, `dup-${ctx.runId}`, Array.from({ length: DUPLICATE_POOL }, () => null));
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = next++; i < lines.length; i = next++) {
        const [id, ts, signature, body] = lines[i]!.split("\t");
        const res = await fetch(`${ctx.server.baseUrl}/api/v1/webhooks/${ctx.connectionId}`, {
          method: "POST",
          headers: { "content-type": "application/json", "webhook-id": id!, "webhook-timestamp": ts!, "webhook-signature": signature! },
          body,
        });
        if (res.status !== 200) throw new Error(`storing the duplicate pool: delivery ${id} answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  const { rows } = await ctx.pool.query<{ n: string }>("SELECT count(*) AS n FROM webhook_event WHERE provider_event_id LIKE $1", [`msg_dup-${ctx.runId}_%`]);
  const stored = Number(rows[0]?.n);
  if (stored !== DUPLICATE_POOL) throw new Error(`storing the duplicate pool: ${stored} of ${DUPLICATE_POOL} stored`);
  return file;
}

async function scriptArgs(ctx: Ctx, scenario: Scenario, concurrency: number, tag: string, seconds: number): Promise<{ script: string; args: string[] }> {
  const threads = String(wrkThreads(concurrency));
  if (scenario === "live") return { script: "live.lua", args: [] };
  if (scenario === "duplicate") return { script: "webhook.lua", args: [ctx.connectionId, ctx.duplicatesFile, threads, "cycle"] };
  const file = await eventsFor(ctx, scenario, tag, batchSize(ctx, concurrency, seconds));
  return { script: "webhook.lua", args: [ctx.connectionId, file, threads] };
}

async function warmUp(ctx: Ctx): Promise<void> {
  ctx.log("warming the server up (2 s per scenario)…");
  for (const { id } of SCENARIOS) {
    const run = await scriptArgs(ctx, id, 16, `warm-${id}-${ctx.runId}`, 2);
    await runWrk({ url: ctx.server.baseUrl, ...run, connections: 16, seconds: 2 });
  }
}

async function measureLeastDisturbed(ctx: Ctx, id: Scenario, c: number, round: number): Promise<Measurement> {
  const kept = await leastDisturbed(
    ctx.options.attempts,
    (attempt) => measure(ctx, id, c, round, attempt),
    (others) => ctx.log(`  ${id} c=${c}: other processes used ${others.toFixed(2)} cores; measuring again`),
  );
  ctx.log(`  ${id.padEnd(9)} c=${String(c).padEnd(2)} ${kept.rps.toFixed(0).padStart(5)} req/s p50 ${kept.p50Ms.toFixed(2)} ms p99 ${kept.p99Ms.toFixed(2)} ms`);
  return kept;
}

async function measure(ctx: Ctx, scenario: Scenario, concurrency: number, round: number, attempt: number): Promise<Measurement> {
  const tag = `${scenario}-c${concurrency}-r${round}-a${attempt}-${ctx.runId}`;
  const warm = await scriptArgs(ctx, scenario, concurrency, `${tag}-warm`, ctx.options.warmupSeconds);
  await runWrk({ url: ctx.server.baseUrl, ...warm, connections: concurrency, seconds: ctx.options.warmupSeconds });
  const run = await scriptArgs(ctx, scenario, concurrency, `${tag}-run`, ctx.options.seconds);
  const before = await serverCounters(ctx.server.baseUrl);
  const sampler = new CpuSampler();
  let wrkPid = 0;
  const result = await runWrk({
    url: ctx.server.baseUrl,
    ...run,
    connections: concurrency,
    seconds: ctx.options.seconds,
    onStart: (pid) => {
      wrkPid = pid;
      sampler.begin();
    },
  });
  const cpu = await sampler.end({ pool: ctx.pool, databaseName: ctx.dbName, serverPid: ctx.server.pid, clientPid: wrkPid });
  const after = await serverCounters(ctx.server.baseUrl);
  const unexpected: Record<string, number> = {};
  for (const [status, count] of Object.entries(result.statuses)) if (status !== "200") unexpected[status] = count;
  if (result.socketErrors > 0) unexpected.socket = result.socketErrors;
  if (scenario === "live") ctx.liveRps.set(concurrency, Math.max(result.rps, ctx.liveRps.get(concurrency) ?? 0));
  const served = after.requests - before.requests;
  return {
    scenario,
    round,
    concurrency,
    rps: result.rps,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    requests: result.requests,
    unexpected,
    exhausted: result.exhausted > 0,
    sqlPerRequest: scenario === "live" || served <= 0 ? null : (after.dbQueries - before.dbQueries) / served,
    cpu,
  };
}

// The liveness run a measurement is compared with: its pair, or (results from before pairs) the
// run's one liveness row at that concurrency.
function liveFor(ms: Measurement[], m: Measurement): { rps: number; p50Ms: number; others: number } | undefined {
  if (m.pair) return m.pair;
  const l = ms.find((x) => x.scenario === "live" && x.concurrency === m.concurrency);
  return l && { rps: l.rps, p50Ms: l.p50Ms, others: l.cpu.others };
}

function table(ms: Measurement[]): string {
  const header = ["scenario", "round", "c", "req/s", "p50 ms", "p99 ms", "live before", "× live", "p50 − live p50", "SQL/req", "cores srv/pg/other", "notes"];
  const rows = ms.map((m) => {
    const l = liveFor(ms, m);
    const notes = [
      Object.keys(m.unexpected).length ? `unexpected ${JSON.stringify(m.unexpected)}` : "",
      m.exhausted ? "ran out of prepared deliveries" : "",
      m.cpu.others > BUSY_CORES ? "machine busy" : "",
    ].filter(Boolean);
    return [
      SCENARIOS.find((s) => s.id === m.scenario)?.label ?? m.scenario,
      m.scenario === "live" ? "" : String(m.round + 1),
      String(m.concurrency),
      m.rps.toFixed(0),
      m.p50Ms.toFixed(2),
      m.p99Ms.toFixed(2),
      m.pair ? m.pair.rps.toFixed(0) : "",
      l && m.scenario !== "live" ? `${(m.rps / l.rps).toFixed(2)}×` : "",
      l && m.scenario !== "live" ? `${m.p50Ms - l.p50Ms >= 0 ? "+" : ""}${(m.p50Ms - l.p50Ms).toFixed(2)} ms` : "",
      m.sqlPerRequest === null ? "" : m.sqlPerRequest.toFixed(2),
      `${m.cpu.server.toFixed(2)}/${m.cpu.postgres.toFixed(2)}/${m.cpu.others.toFixed(2)}`,
      notes.join("; "),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

type Check = { pass: boolean; disturbed: boolean; text: string };

// Each target is judged on the median over the rounds of the scenario's figure against its
// paired liveness run (one round: that round's figure).
function targets(ms: Measurement[]): Check[] {
  const clean = (m: Measurement) => Object.keys(m.unexpected).length === 0 && !m.exhausted;
  const checks: Check[] = [];
  const judged = (s: Scenario, c: number, figure: (m: Measurement, live: { rps: number; p50Ms: number }) => number) => {
    const runs = ms.flatMap((m) => {
      const live = m.scenario === s && m.concurrency === c ? liveFor(ms, m) : undefined;
      return live ? [{ m, live, value: figure(m, live) }] : [];
    });
    if (runs.length === 0) return null;
    return {
      value: median(runs.map((r) => r.value)),
      each: runs.map((r) => r.value),
      clean: runs.every((r) => clean(r.m)),
      disturbed: runs.some((r) => r.m.cpu.others > BUSY_CORES || r.live.others > BUSY_CORES),
    };
  };
  const rounds = (each: number[], fmt: (v: number) => string) => (each.length > 1 ? ` (median of ${each.length} rounds: ${each.map(fmt).join(", ")})` : "");
  for (const s of ["settle", "unmatched"] as const) {
    const ratio = judged(s, 16, (m, live) => m.rps / live.rps);
    if (ratio) {
      checks.push({
        pass: ratio.value >= 0.6 && ratio.clean,
        disturbed: ratio.disturbed,
        text: `${s} ingests at c=16 ≥ 0.6× liveness: ${ratio.value.toFixed(3)}×${rounds(ratio.each, (v) => `${v.toFixed(2)}×`)}`,
      });
    }
    const p50 = judged(s, 1, (m, live) => m.p50Ms - live.p50Ms);
    if (p50) {
      checks.push({
        pass: p50.value <= 2 && p50.clean,
        disturbed: p50.disturbed,
        text: `${s} ingest p50 at c=1 within 2 ms of liveness p50: +${p50.value.toFixed(2)} ms${rounds(p50.each, (v) => `+${v.toFixed(2)}`)}`,
      });
    }
  }
  return checks;
}
