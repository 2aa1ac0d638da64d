import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { ensureBuild, inputsDigest } from "@/lib/cli/ensure-build";
import { BUSY_CORES, CpuSampler, leastDisturbed, type CpuShares } from "./cpu";
import { benchDatabaseName, createDatabase, DEFAULT_SERVER_URL, dropDatabase, prepareWorld, type BenchWorld } from "./database";
import { floorKeyPrefix, POOL_SIZE, prepareKeyPools, writeCompletesFile } from "./fixtures";
import { runFloor, type FloorJob, type FloorScenario } from "./pg-floor";
import { countOperations, seedOperations } from "./seed-operations";
import { serverCounters, startServer, type BenchServer } from "./server";
import { ensureWrk, runWrk, wrkThreads, type WrkResult } from "./wrk";

// `npm run bench` (= `npm run bench -- protocol`): the operation protocol's throughput and
// latency against a real `next start`, next to the same SQL issued directly (the floor), at
// several table sizes, in one run. See bench/README.md.

export type Scenario = "live" | "claim-new" | "complete" | "replay" | "conflict";

export const SCENARIOS: { id: Scenario; label: string; status: number; floorCode?: string }[] = [
  { id: "live", label: "liveness GET /api/live", status: 200 },
  { id: "claim-new", label: "new claim → 201", status: 201, floorCode: "created" },
  { id: "complete", label: "complete → 200", status: 200, floorCode: "completed" },
  { id: "replay", label: "replay → 200", status: 200, floorCode: "replay" },
  { id: "conflict", label: "lease live → 409", status: 409, floorCode: "operation-in-progress" },
];

export type Side = {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  seconds: number;
  // Answers other than the scenario's expected one (status code or SQL code → count); {} when clean.
  unexpected: Record<string, number>;
  exhausted: boolean;
  cpu: CpuShares;
};

export type Measurement = {
  size: number;
  rowsAtStart: number;
  scenario: Scenario;
  concurrency: number;
  // pairedLive: GET /api/live at the same concurrency, measured right before this run (the
  // ratios use it: on a shared VM the host's speed drifts over the minutes between the
  // size's own liveness row and a later scenario). Absent in results from before 2026-11-30.
  http: Side & { p90Ms: number; sqlPerRequest: number | null; pairedLive?: { rps: number; p50Ms: number; otherCores: number } };
  floor: Side | null;
};

export type ProtocolOptions = {
  seconds: number;
  warmupSeconds: number;
  sizes: number[];
  concurrencies: number[];
  // Measurements per run at most: a disturbed one (see BUSY_CORES) is repeated, the least disturbed kept.
  attempts: number;
  keepDb: boolean;
};

export type ProtocolRun = {
  startedAt: string;
  finishedAt: string;
  totalSeconds: number;
  machine: { cpus: number; loadBefore: number[]; loadAfter: number[]; node: string; postgres: string; sharedBuffers: string };
  options: ProtocolOptions;
  seeding: { size: number; seconds: number; steps: Record<string, number> }[];
  // At the start of each size: the table, and the server's memory (a growing heap would show here).
  rounds: Round[];
  measurements: Measurement[];
};

export type Round = { size: number; rowsAtStart: number; operationMb: number; attemptMb: number; serverRssMb: number; serverHeapMb: number };

export { BUSY_CORES };

export async function runProtocolBench(options: ProtocolOptions, log: (msg: string) => void): Promise<ProtocolRun> {
  const startedAt = new Date();
  const loadBefore = loadavg();
  if ((loadBefore[0] ?? 0) > 1.5) {
    log(`warning: the machine is already busy (load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")}); see the "others" CPU column`);
  }
  ensureWrk(log);
  const distDir = path.join(".tollgate", "next-bench", inputsDigest().slice(0, 16));
  const { built } = ensureBuild({ distDir, log });
  if (built) pruneBenchBuilds(path.resolve(".tollgate", "next-bench"), distDir);

  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const dbName = benchDatabaseName(startedAt);
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((e: unknown) => log(`cleanup: ${String(e)}`));
  };
  const onSignal = () => {
    log("interrupted; stopping the server and dropping the bench database…");
    void cleanup().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const scratch = mkdtempSync(path.join(tmpdir(), "tollgate-bench-"));
  cleanups.push(async () => rmSync(scratch, { recursive: true, force: true }));

  try {
    log(`database ${dbName} on ${redact(serverUrl)}`);
    const databaseUrl = await createDatabase(serverUrl, dbName);
    if (!options.keepDb) cleanups.push(() => dropDatabase(serverUrl, dbName));
    const world = await prepareWorld(databaseUrl);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: "tollgate-bench" });
    cleanups.push(() => pool.end());
    const settings = (
      await pool.query<{ version: string; shared_buffers: string }>(
        "SELECT current_setting('server_version') AS version, current_setting('shared_buffers') AS shared_buffers",
      )
    ).rows[0];

    await prepareKeyPools(pool, world);

    const secret = `bench-${randomBytes(24).toString("hex")}`;
    const server = await startServer({ databaseUrl, distDir, secret });
    cleanups.push(() => server.stop());
    log(`next start on ${server.baseUrl} (pid ${server.pid})`);

    const ctx: Ctx = { world, pool, server, dbName, secret, scratch, options, log, runId: randomBytes(4).toString("hex"), liveRps: new Map(), lastFloorClaimRps: new Map() };
    await warmUpServer(ctx);
    const measurements: Measurement[] = [];
    const rounds: Round[] = [];
    const seeding: ProtocolRun["seeding"] = [];
    let seeded = 0;
    for (const size of options.sizes) {
      if (size > seeded) {
        log(`seeding ${(size - seeded).toLocaleString("en")} operations (to ${size.toLocaleString("en")})…`);
        const { seconds, steps } = await seedOperations({ pool, world, count: size - seeded, tag: String(seeding.length + 1) });
        seeding.push({ size, seconds, steps });
        log(`  seeded in ${seconds.toFixed(1)} s (${Object.entries(steps).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(", ")})`);
        seeded = size;
      }
      const round = await describeRound(ctx, size);
      rounds.push(round);
      measurements.push(...(await measureSize(ctx, round)));
    }
    const finishedAt = new Date();
    return {
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      totalSeconds: (finishedAt.getTime() - startedAt.getTime()) / 1000,
      machine: { cpus: cpus().length, loadBefore, loadAfter: loadavg(), node: process.version,
        postgres: settings?.version ?? "?",
        sharedBuffers: settings?.shared_buffers ?? "?",
      },
      options,
      seeding,
      rounds,
      measurements,
    };
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await cleanup();
  }
}

type Ctx = {
  world: BenchWorld;
  pool: pg.Pool;
  server: BenchServer;
  dbName: string;
  secret: string;
  scratch: string;
  options: ProtocolOptions;
  log: (msg: string) => void;
  runId: string;
  // Liveness req/s per concurrency (the HTTP ceiling): sizes the batches completes need.
  liveRps: Map<number, number>;
  lastFloorClaimRps: Map<number, number>;
};

// A fresh server spends its first seconds compiling (V8 tiers up the hot paths, Next loads
// route modules lazily). Every scenario runs a few seconds first, so the first size measured
// is not handicapped against the later ones (which would flatter the 1M-vs-0 comparison).
async function warmUpServer(ctx: Ctx): Promise<void> {
  const { world, server } = ctx;
  const key = world.agent.secret;
  const seconds = 2;
  const threads = wrkThreads(16);
  const complete = await completesFile(ctx, `warm-${ctx.runId}`, 2000 * seconds);
  const runs: { script: string; args: string[] }[] = [
    { script: "live.lua", args: [] },
    { script: "claim-new.lua", args: [key, world.tool, `warm-${ctx.runId}`] },
    { script: "complete.lua", args: [key, complete, String(threads)] },
    { script: "claim-pool.lua", args: [key, world.tool, "replay-", String(POOL_SIZE), String(threads)] },
    { script: "claim-pool.lua", args: [key, world.tool, "conflict-", String(POOL_SIZE), String(threads)] },
  ];
  ctx.log(`warming the server up (${runs.length} × ${seconds} s)…`);
  for (const run of runs) await runWrk({ url: server.baseUrl, ...run, connections: 16, seconds });
}

async function describeRound(ctx: Ctx, size: number): Promise<Round> {
  const rowsAtStart = await countOperations(ctx.pool);
  const { rows } = await ctx.pool.query<{ operation: string; attempt: string }>(
    "SELECT pg_total_relation_size('operation') AS operation, pg_total_relation_size('attempt') AS attempt",
  );
  const status = readFileSync(`/proc/${ctx.server.pid}/status`, "utf8");
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const round: Round = {
    size,
    rowsAtStart,
    operationMb: Math.round(Number(rows[0]?.operation ?? 0) / 2 ** 20),
    attemptMb: Math.round(Number(rows[0]?.attempt ?? 0) / 2 ** 20),
    serverRssMb: Math.round(rssKb / 1024),
    serverHeapMb: Math.round((await serverCounters(ctx.server.baseUrl)).heapUsedBytes / 2 ** 20),
  };
  ctx.log(
    `— ${size.toLocaleString("en")} seeded: ${rowsAtStart.toLocaleString("en")} operations in the table ` +
      `(operation ${round.operationMb} MB, attempt ${round.attemptMb} MB with indexes); server RSS ${round.serverRssMb} MB, heap ${round.serverHeapMb} MB`,
  );
  return round;
}

async function measureSize(ctx: Ctx, round: Round): Promise<Measurement[]> {
  const { size, rowsAtStart } = round;
  const out: Measurement[] = [];
  for (const { id: scenario } of SCENARIOS) {
    for (const concurrency of ctx.options.concurrencies) {
      const best = <T extends { cpu: CpuShares }>(measure: (attempt: number) => Promise<T>, what: string): Promise<T> =>
        leastDisturbed(ctx.options.attempts, measure, (others) => ctx.log(`  ${what}: other processes used ${others.toFixed(2)} cores; measuring again`));
      const tag = (attempt: number) => `${ctx.runId}-s${size}-c${concurrency}-a${attempt}`;
      const what = `${scenario} c=${concurrency}`;
      const http = await best(async (a) => {
        const pairedLive = scenario === "live" ? undefined : await measureHttp(ctx, "live", concurrency, `${tag(a)}-live`);
        const measured = await measureHttp(ctx, scenario, concurrency, tag(a));
        if (!pairedLive) return measured;
        // The pair counts as disturbed when either of its runs was.
        const cpu = { ...measured.cpu, others: Math.max(measured.cpu.others, pairedLive.cpu.others) };
        return { ...measured, cpu, pairedLive: { rps: pairedLive.rps, p50Ms: pairedLive.p50Ms, otherCores: pairedLive.cpu.others } };
      }, `HTTP ${what}`);
      const floor = scenario === "live" ? null : await best((a) => measureFloor(ctx, scenario, concurrency, tag(a), http.rps), `floor ${what}`);
      const m: Measurement = { size, rowsAtStart, scenario, concurrency, http, floor };
      ctx.log(
        `  ${scenario.padEnd(9)} c=${String(concurrency).padEnd(2)} HTTP ${http.rps.toFixed(0).padStart(5)} req/s p50 ${http.p50Ms.toFixed(2)} ms` +
          (http.pairedLive ? ` (live just before: ${http.pairedLive.rps.toFixed(0)} req/s)` : "") +
          (floor ? ` | pg ${floor.rps.toFixed(0).padStart(5)} req/s p50 ${floor.p50Ms.toFixed(2)} ms` : "") +
          (Object.keys(http.unexpected).length ? ` UNEXPECTED ${JSON.stringify(http.unexpected)}` : ""),
      );
      out.push(m);
    }
  }
  return out;
}

async function measureHttp(ctx: Ctx, scenario: Scenario, concurrency: number, tag: string): Promise<Measurement["http"]> {
  const { world, server, options } = ctx;
  const key = world.agent.secret;
  const threads = wrkThreads(concurrency);
  let scriptFor: (phase: "warm" | "run") => Promise<{ script: string; args: string[] }>;
  switch (scenario) {
    case "live":
      scriptFor = async () => ({ script: "live.lua", args: [] });
      break;
    case "claim-new":
      scriptFor = async (phase) => ({ script: "claim-new.lua", args: [key, world.tool, `bench-${tag}-${phase}`] });
      break;
    case "replay":
      scriptFor = async () => ({ script: "claim-pool.lua", args: [key, world.tool, "replay-", String(POOL_SIZE), String(threads)] });
      break;
    case "conflict":
      scriptFor = async () => ({ script: "claim-pool.lua", args: [key, world.tool, "conflict-", String(POOL_SIZE), String(threads)] });
      break;
    case "complete":
      scriptFor = async (phase) => {
        const seconds = phase === "warm" ? options.warmupSeconds : options.seconds;
        const file = await completesFile(ctx, `complete-${tag}-${phase}`, batchSize(ctx, concurrency, seconds));
        return { script: "complete.lua", args: [key, file, String(threads)] };
      };
      break;
  }
  const warm = await scriptFor("warm");
  await runWrk({ url: server.baseUrl, ...warm, connections: concurrency, seconds: options.warmupSeconds });
  const run = await scriptFor("run");
  const before = await serverCounters(server.baseUrl);
  const sampler = new CpuSampler();
  let wrkPid = 0;
  const result: WrkResult = await runWrk({
    url: server.baseUrl,
    ...run,
    connections: concurrency,
    seconds: options.seconds,
    onStart: (pid) => {
      wrkPid = pid;
      sampler.begin();
    },
  });
  const cpu = await sampler.end({ pool: ctx.pool, databaseName: ctx.dbName, serverPid: server.pid, clientPid: wrkPid });
  const after = await serverCounters(server.baseUrl);
  const expected = SCENARIOS.find((s) => s.id === scenario)?.status ?? 200;
  const unexpected: Record<string, number> = {};
  for (const [status, count] of Object.entries(result.statuses)) if (Number(status) !== expected) unexpected[status] = count;
  if (result.socketErrors > 0) unexpected.socket = result.socketErrors;
  const served = after.requests - before.requests;
  if (scenario === "live") ctx.liveRps.set(concurrency, Math.max(result.rps, ctx.liveRps.get(concurrency) ?? 0));
  return {
    rps: result.rps,
    p50Ms: result.p50Ms,
    p90Ms: result.p90Ms,
    p99Ms: result.p99Ms,
    requests: result.requests,
    seconds: result.seconds,
    unexpected,
    exhausted: result.exhausted > 0,
    cpu,
    sqlPerRequest: scenario === "live" || served <= 0 ? null : (after.dbQueries - before.dbQueries) / served,
  };
}

async function measureFloor(ctx: Ctx, scenario: Scenario, concurrency: number, tag: string, httpRps: number): Promise<Side> {
  const { options } = ctx;
  const floorScenario = scenario as FloorScenario;
  const job: FloorJob = {
    world: ctx.world,
    secret: ctx.secret,
    scenario: floorScenario,
    concurrency,
    seconds: options.seconds,
    warmupSeconds: options.warmupSeconds,
    keyPrefix: floorKeyPrefix(scenario, `floor-${tag}-`),
    poolSize: POOL_SIZE,
    expectCode: SCENARIOS.find((s) => s.id === scenario)?.floorCode ?? "",
    cpu: { serverPid: ctx.server.pid, databaseName: ctx.dbName },
  };
  if (scenario === "complete") {
    // The floor is usually faster than HTTP: size its batch on the floor's own claim rate (it
    // stops early, and the table says so, if it runs out anyway).
    const perSecond = Math.max(httpRps * 3, (ctx.lastFloorClaimRps.get(concurrency) ?? 0) * 1.5, concurrency > 1 ? 2000 : 1000);
    job.completesFile = await completesFile(ctx, `floor-complete-${tag}`, Math.ceil(perSecond * (options.seconds + options.warmupSeconds)) + 200);
  }
  // In this process: it is idle while the floor runs, so its event loop is the floor's client.
  const result = await runFloor(job);
  if (scenario === "claim-new") ctx.lastFloorClaimRps.set(concurrency, result.rps);
  const unexpected: Record<string, number> = {};
  for (const [code, count] of Object.entries(result.codes)) if (code !== job.expectCode) unexpected[code] = count;
  if (result.errors > 0) unexpected.error = result.errors;
  return {
    rps: result.rps,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    requests: result.requests,
    seconds: result.seconds,
    unexpected,
    exhausted: result.exhausted,
    cpu: result.cpu,
  };
}

function completesFile(ctx: Ctx, name: string, n: number): Promise<string> {
  return writeCompletesFile(ctx.pool, ctx.world, `${name}-`, n, path.join(ctx.scratch, `${name}.txt`));
}

// Enough prepared operations for the run: no route is faster than liveness (measured first at
// each size), so 1.25× liveness req/s × seconds cannot run out; never fewer than 300.
function batchSize(ctx: Ctx, concurrency: number, seconds: number): number {
  const ceiling = ctx.liveRps.get(concurrency) ?? 1000;
  return Math.max(300, Math.ceil(ceiling * 1.25 * Math.max(1, seconds)) + 100);
}

function pruneBenchBuilds(root: string, current: string): void {
  const keep = path.resolve(current);
  for (const name of readdirSync(root)) {
    const dir = path.join(root, name);
    if (dir !== keep && !name.endsWith(".build-lock") && statSync(dir).isDirectory()) rmSync(dir, { recursive: true, force: true });
  }
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}

export function resultsDir(): string {
  const dir = path.resolve("bench", ".results");
  mkdirSync(dir, { recursive: true });
  return dir;
}
