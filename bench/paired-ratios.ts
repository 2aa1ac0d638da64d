// `npm run bench -- paired [--rounds N] [--seconds S] [--node "<flags>"]`: the c=16 ratios the
// protocol targets are about, measured so that a noisy, shared machine cannot bias them. Each
// round runs GET /api/live, new claims, completes and replays back to back on one `next start`,
// and each route's ratio is taken against the liveness runs on either side of it (paired in
// time: a host that slows down for a minute slows both alike). Besides req/s it prints the
// server's CPU per request from /proc: with the Node process saturated (≈1 core) at c=16, the
// req/s ratio is the inverse CPU ratio, and CPU time is not inflated by the hypervisor's steal.
// `--node` passes flags to the server's node (e.g. --max-semi-space-size=64) for A/B runs.
// `--framework` also measures what Next.js alone costs for a request of each shape: a POST with a
// claim's headers and body to a static path, and a complete's to a dynamic path, answered without
// doing anything, and the static one again with one `SELECT 1` on the hot connection
// (bench/framework-ceiling/, copied into the app for one separate build).
// `--connections 1` measures the same pairs at concurrency 1, where the target is a claim's p50
// within 1 ms of liveness's: with `--framework` the rows are a ladder from liveness to a claim
// (a POST, plus a database round trip, plus the claim's statement and Tollgate's code), and the
// claim statement's and `SELECT 1`'s own p50 straight through pg are printed beside it.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { ensureBuild, inputsDigest } from "@/lib/cli/ensure-build";
import { machineTicks, processUserSystemTicks, TICKS_PER_SECOND } from "./cpu";
import { benchDatabaseName, createDatabase, DEFAULT_SERVER_URL, dropDatabase, prepareWorld, type BenchWorld } from "./database";
import { succeededBatch, writeCompletesFile } from "./fixtures";
import { runFloor } from "./pg-floor";
import { startServer, type BenchServer } from "./server";
import { median } from "./stats";
import { ensureWrk, runWrk, wrkThreads } from "./wrk";

type Route = "live" | "claim" | "complete" | "replay" | "echo-static" | "echo-dynamic" | "echo-sql";
type Sample = { route: Route; rps: number; p50Ms: number; cpuMsPerRequest: number; systemShare: number; stealShare: number };

const SERVER_SECRET = "paired-secret-0123456789abcdef0123456";
const EXPECTED: Record<Route, string> = {
  live: "200",
  claim: "201",
  complete: "200",
  replay: "200",
  "echo-static": "200",
  "echo-dynamic": "200",
  "echo-sql": "200",
};

// A run that got anything but its route's answer measured something else (a 404 costs less than a claim).
function assertStatuses(route: Route, statuses: Record<string, number>): void {
  const wrong = Object.entries(statuses).filter(([status]) => status !== EXPECTED[route]);
  if (wrong.length > 0) throw new Error(`${route}: expected only ${EXPECTED[route]}, got ${JSON.stringify(statuses)}`);
}

export async function runPairedRatios(argv: string[]): Promise<number> {
  let rounds = 3;
  let seconds = 4;
  let nodeArgs: string[] = [];
  let framework = false;
  let connections = 16;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--framework") framework = true;
    else if (argv[i] === "--connections") connections = Number(argv[++i]);
    else if (argv[i] === "--rounds") rounds = Number(argv[++i]);
    else if (argv[i] === "--seconds") seconds = Number(argv[++i]);
    else if (argv[i] === "--node") nodeArgs = (argv[++i] ?? "").split(/\s+/).filter(Boolean);
    else throw new Error(`unknown argument: ${argv[i]}`);
  }
  const log = (m: string) => process.stderr.write(`[paired] ${m}\n`);
  ensureWrk(log);
  const distDir = framework ? buildWithFrameworkCeiling(log) : path.join(".tollgate", "next-bench", inputsDigest().slice(0, 16));
  if (!framework) ensureBuild({ distDir, log });
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const dbName = benchDatabaseName(new Date());
  const databaseUrl = await createDatabase(serverUrl, dbName);
  const scratch = mkdtempSync(path.join(tmpdir(), "tollgate-paired-"));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const samples: Sample[] = [];
  let floors: Floors | null = null;
  let server: BenchServer | null = null;
  try {
    const world = await prepareWorld(databaseUrl);
    await succeededBatch(pool, world, "replay-", 1000);
    const started = await startServer({ databaseUrl, distDir, secret: SERVER_SECRET, nodeArgs });
    server = started;
    const key = world.agent.secret;
    const threads = String(wrkThreads(connections));
    const completes = (tag: string, n: number) => writeCompletesFile(pool, world, `${tag}-`, n, path.join(scratch, `${tag}.txt`));
    const script = async (route: Route, tag: string, runSeconds: number) => {
      switch (route) {
        case "live":
          return { script: "live.lua", args: [] };
        case "claim":
          return { script: "claim-new.lua", args: [key, world.tool, `paired-${tag}`] };
        case "replay":
          return { script: "claim-pool.lua", args: [key, world.tool, "replay-", "1000", threads] };
        case "complete":
          return { script: "complete.lua", args: [key, await completes(`c-${tag}`, Math.ceil(runSeconds * 2500)), threads] };
        case "echo-static":
          return { script: "echo.lua", args: ["static"] };
        case "echo-dynamic":
          return { script: "echo.lua", args: ["dynamic"] };
        case "echo-sql":
          return { script: "echo.lua", args: ["sql"] };
      }
    };
    const measured: Route[] = ["claim", "complete", "replay", ...(framework ? (["echo-static", "echo-dynamic", "echo-sql"] as const) : [])];
    log(`warming up (${nodeArgs.join(" ") || "default node flags"})…`);
    for (const route of ["live" as const, ...measured]) {
      const warm = await runWrk({ url: started.baseUrl, ...(await script(route, `warm-${route}`, 2)), connections, seconds: 2 });
      assertStatuses(route, warm.statuses);
    }
    // One measured run: req/s, the server's CPU per request, and how much the hypervisor stole meanwhile.
    const measure = async (route: Route, tag: string): Promise<Sample> => {
      const s = await script(route, tag, seconds);
      const ticks0 = processUserSystemTicks(started.pid);
      const steal0 = machineTicks();
      const run = await runWrk({ url: started.baseUrl, ...s, connections, seconds });
      const ticks1 = processUserSystemTicks(started.pid);
      const system = ticks1.system - ticks0.system;
      const ticks = ticks1.user - ticks0.user + system;
      const steal1 = machineTicks();
      assertStatuses(route, run.statuses);
      const sample = {
        route,
        rps: run.rps,
        p50Ms: run.p50Ms,
        cpuMsPerRequest: ((ticks / TICKS_PER_SECOND) * 1000) / Math.max(1, run.requests),
        systemShare: system / Math.max(1, ticks),
        stealShare: (steal1.steal - steal0.steal) / Math.max(1, steal1.total - steal0.total),
      };
      log(`${tag} ${route.padEnd(12)} ${sample.rps.toFixed(0).padStart(5)} req/s  p50 ${sample.p50Ms.toFixed(2)} ms  ${sample.cpuMsPerRequest.toFixed(3)} CPU ms/req (${(sample.systemShare * 100).toFixed(0)}% kernel)  steal ${(sample.stealShare * 100).toFixed(0)}%`);
      return sample;
    };
    // live, claim, live, complete, live, replay, … and a last liveness run, so every route has a
    // liveness neighbour on both sides.
    const order: Route[] = measured.flatMap((route) => ["live" as const, route]);
    for (let round = 0; round < rounds; round++) {
      for (const [i, route] of order.entries()) samples.push(await measure(route, `r${round + 1}-${i}`));
    }
    samples.push(await measure("live", "last"));
    if (connections === 1) {
      log("the pg floor at c=1: SELECT 1, then the claim statement…");
      floors = await floorsAtOne(world, databaseUrl, dbName, started.pid, seconds);
    }
  } finally {
    await server?.stop();
    await pool.end();
    await dropDatabase(serverUrl, dbName);
    rmSync(scratch, { recursive: true, force: true });
  }
  printTable(samples, connections, floors);
  return 0;
}

type Floors = { selectOneP50Ms: number; claimP50Ms: number };

// What PostgreSQL alone takes at c=1, through pg like the server's hot connection: a bare round
// trip (`SELECT 1`, prepared) and the claim statement (bench/pg-floor.ts, the server's parameters).
async function floorsAtOne(world: BenchWorld, databaseUrl: string, databaseName: string, serverPid: number, seconds: number): Promise<Floors> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "tollgate-bench-floor" });
  await client.connect();
  const latencies: number[] = [];
  try {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      const t0 = performance.now();
      await client.query({ name: "ping", text: "SELECT 1 AS one" });
      latencies.push(performance.now() - t0);
    }
  } finally {
    await client.end();
  }
  const claim = await runFloor({
    world,
    secret: SERVER_SECRET,
    scenario: "claim-new",
    concurrency: 1,
    seconds,
    warmupSeconds: 1,
    keyPrefix: `paired-floor-${Date.now()}-`,
    expectCode: "created",
    cpu: { serverPid, databaseName },
  });
  return { selectOneP50Ms: median(latencies), claimP50Ms: claim.p50Ms };
}

// Ratios against the mean of the liveness runs just before and just after each measurement; at
// c=1 also each p50's difference from theirs (the claim's target: within 1 ms).
function printTable(samples: Sample[], connections: number, floors: Floors | null): void {
  const targets: Partial<Record<Route, string>> =
    connections === 1 ? { claim: "p50 ≤ live + 1 ms" } : { claim: "≥ 0.6×", complete: "≥ 0.6×", replay: "≥ 0.7×" };
  const labels: Partial<Record<Route, string>> = {
    "echo-static": "Next.js alone: POST, static path, claim body",
    "echo-dynamic": "Next.js alone: POST, dynamic path, complete body",
    "echo-sql": "the same POST + `SELECT 1` on the hot connection",
  };
  console.log(`| route (c=${connections}) | req/s (median) | × live req/s (paired, median) | p50 ms | p50 − live p50 (paired, median) | CPU ms/req | live CPU ÷ route CPU | target |`);
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  const live = samples.filter((s) => s.route === "live");
  console.log(
    `| GET /api/live | ${median(live.map((s) => s.rps)).toFixed(0)} | | ${median(live.map((s) => s.p50Ms)).toFixed(2)} | | ${median(live.map((s) => s.cpuMsPerRequest)).toFixed(3)} | | |`,
  );
  const routes = ["echo-static", "echo-dynamic", "echo-sql", "claim", "complete", "replay"] as const;
  for (const route of connections === 1 ? routes : ([...routes.slice(3), ...routes.slice(0, 3)] as Route[])) {
    const ratios: number[] = [];
    const p50Deltas: number[] = [];
    const cpuRatios: number[] = [];
    samples.forEach((s, i) => {
      if (s.route !== route) return;
      const before = samples.slice(0, i).reverse().find((x) => x.route === "live");
      const after = samples.slice(i + 1).find((x) => x.route === "live");
      const neighbours = [before, after].filter((x): x is Sample => Boolean(x));
      const mean = (pick: (x: Sample) => number) => neighbours.reduce((a, x) => a + pick(x), 0) / neighbours.length;
      ratios.push(s.rps / mean((x) => x.rps));
      p50Deltas.push(s.p50Ms - mean((x) => x.p50Ms));
      cpuRatios.push(mean((x) => x.cpuMsPerRequest) / s.cpuMsPerRequest);
    });
    const mine = samples.filter((s) => s.route === route);
    if (mine.length === 0) continue;
    const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${ms.toFixed(2)}`;
    console.log(
      `| ${labels[route] ?? route} | ${median(mine.map((s) => s.rps)).toFixed(0)} | ${median(ratios).toFixed(2)}× (${ratios.map((r) => r.toFixed(2)).join(", ")}) | ${median(mine.map((s) => s.p50Ms)).toFixed(2)} | ${signed(median(p50Deltas))} ms (${p50Deltas.map(signed).join(", ")}) | ${median(mine.map((s) => s.cpuMsPerRequest)).toFixed(3)} | ${median(cpuRatios).toFixed(2)}× | ${targets[route] ?? ""} |`,
    );
  }
  if (floors) {
    console.log(`\npg floor at c=1 (p50): SELECT 1 ${floors.selectOneP50Ms.toFixed(3)} ms, the claim statement ${floors.claimP50Ms.toFixed(3)} ms`);
  }
  const steal = samples.map((s) => s.stealShare);
  console.log(`\nsteal: median ${(median(steal) * 100).toFixed(0)}%, max ${(Math.max(...steal) * 100).toFixed(0)}% of the machine's time`);
}

// The app plus the bench-only echo routes, built into a folder of its own (and only when the
// sources changed); the routes are removed from app/ again right after the build.
function buildWithFrameworkCeiling(log: (m: string) => void): string {
  const target = path.join("app", "api", "bench-framework-ceiling");
  cpSync(path.join("bench", "framework-ceiling"), target, { recursive: true });
  try {
    const distDir = path.join(".tollgate", "next-bench", `framework-${inputsDigest().slice(0, 16)}`);
    ensureBuild({ distDir, log });
    return distDir;
  } finally {
    rmSync(target, { recursive: true, force: true });
  }
}
