// `npm run bench -- profile [replay|complete] [--connections N]`: where a request's CPU goes. Starts
// `next start` under --cpu-prof, drives GET /api/live and then new claims (replays, completes) with
// wrk at concurrency 16 (or N), and prints the self time of each package/file group per request, so
// claim-specific cost stands out against liveness; at N=1 "(idle)" is what a lone request waits for.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { ensureBuild, inputsDigest } from "@/lib/cli/ensure-build";
import { benchDatabaseName, createDatabase, DEFAULT_SERVER_URL, dropDatabase, prepareWorld } from "./database";
import { startServer } from "./server";
import { ensureWrk, runWrk, wrkThreads } from "./wrk";
import { succeededBatch, writeCompletesFile } from "./fixtures";
import pg from "pg";

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber?: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

function group(url: string, fn: string): string {
  if (!url) return fn.startsWith("(") ? fn : "(native)";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) {
    if (m[1] === "next") {
      const sub = /next\/dist\/(?:compiled\/)?([^/]+(?:\/[^/]+)?)/.exec(url);
      return `next/${sub?.[1] ?? "?"}`;
    }
    return m[1]!;
  }
  if (url.startsWith("node:")) return url;
  if (url.includes(".tollgate/")) return "app bundle (tollgate code)";
  return url.split("/").slice(-2).join("/");
}

// Self time per group, and per function (native code is charged to the JS function that called it).
// With `callersOf`, also the time of that function per chain of its (up to 4) callers.
function selfTimes(file: string, callersOf?: string): { groups: Map<string, number>; functions: Map<string, number>; callers: Map<string, number> } {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, Node>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  const callers = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, ms: number) => m.set(k, (m.get(k) ?? 0) + ms);
  p.samples.forEach((id, i) => {
    const ms = (p.timeDeltas[i] ?? 0) / 1000;
    let n = byId.get(id)!;
    add(groups, group(n.callFrame.url, n.callFrame.functionName), ms);
    let prefix = "";
    if (!n.callFrame.url && !n.callFrame.functionName.startsWith("(")) {
      prefix = "native in ";
      while (!n.callFrame.url && parent.has(n.id)) n = parent.get(n.id)!;
    }
    add(functions, `${prefix}${n.callFrame.functionName || "(anonymous)"} · ${group(n.callFrame.url, n.callFrame.functionName)}`, ms);
    if (callersOf && n.callFrame.functionName === callersOf) {
      const chain: string[] = [];
      for (let up = parent.get(n.id); up && chain.length < 4; up = parent.get(up.id)) {
        chain.push(`${up.callFrame.functionName || "(anonymous)"} (${group(up.callFrame.url, up.callFrame.functionName)}:${up.callFrame.lineNumber ?? 0})`);
      }
      add(callers, chain.join(" ← ") || "(root)", ms);
    }
  });
  return { groups, functions, callers };
}

// `profile` (new claims), `profile replay` (200 replays of a pool of succeeded operations) or
// `profile complete` (completes of operations claimed beforehand).
export async function runProfile(argv: string[] = []): Promise<number> {
  const kind = argv[0] === "replay" || argv[0] === "complete" ? argv[0] : "claim";
  // --callers NAME: where the time of the function NAME comes from (its callers, per request).
  const callersAt = argv.indexOf("--callers");
  const callersOf = callersAt >= 0 ? argv[callersAt + 1] : undefined;
  // --connections N: wrk's concurrency (default 16); 1 shows what a lone request pays for waiting.
  const connectionsAt = argv.indexOf("--connections");
  const connections = connectionsAt >= 0 ? Number(argv[connectionsAt + 1]) : 16;
  if (!Number.isInteger(connections) || connections < 1) throw new Error("--connections takes a whole number ≥ 1");
  const log = (m: string) => process.stderr.write(`[profile] ${m}\n`);
  ensureWrk(log);
  const distDir = path.join(".tollgate", "next-bench", inputsDigest().slice(0, 16));
  ensureBuild({ distDir, log });
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const dbName = benchDatabaseName(new Date());
  const databaseUrl = await createDatabase(serverUrl, dbName);
  const results: { label: string; requests: number; times: Map<string, number>; functions: Map<string, number>; callers: Map<string, number> }[] = [];
  const scratch = mkdtempSync(path.join(tmpdir(), "tollgate-prof-"));
  try {
    const world = await prepareWorld(databaseUrl);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    await succeededBatch(pool, world, "replay-", 1000);
    // Completes: operations claimed beforehand, one file for the warm-up and one for the run (complete.lua
    // starts each file over from its first line).
    const completes = path.join(scratch, "completes-run.txt");
    const warmCompletes = path.join(scratch, "completes-warm.txt");
    if (kind === "complete") {
      for (const [file, n] of [[warmCompletes, 10_000], [completes, 25_000]] as const) {
        await writeCompletesFile(pool, world, `${path.basename(file, ".txt")}-`, n, file);
      }
    }
    await pool.end();
    const threads = String(wrkThreads(connections));
    const measured =
      kind === "replay"
        ? { label: "replay", script: "claim-pool.lua", args: [world.agent.secret, world.tool, "replay-", "1000", threads] }
        : kind === "complete"
          ? { label: "complete", script: "complete.lua", args: [world.agent.secret, completes, threads] }
          : { label: "new claim", script: "claim-new.lua", args: [world.agent.secret, world.tool, `prof-${randomBytes(4).toString("hex")}`] };
    for (const scenario of [{ label: "GET /api/live", script: "live.lua", args: [] as string[] }, measured]) {
      const dir = mkdtempSync(path.join(tmpdir(), "tollgate-prof-"));
      const server = await startServer({ databaseUrl, distDir, secret: "profile-secret-0123456789abcdef0123", nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`] });
      const warmArgs =
        scenario.script === "claim-new.lua"
          ? [scenario.args[0]!, scenario.args[1]!, `${scenario.args[2]}-w`]
          : scenario.script === "complete.lua"
            ? [scenario.args[0]!, warmCompletes, scenario.args[2]!]
            : scenario.args;
      const warm = await runWrk({ url: server.baseUrl, script: scenario.script, args: warmArgs, connections, seconds: 3 });
      const run = await runWrk({ url: server.baseUrl, ...scenario, connections, seconds: 8 });
      await server.stop();
      const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
      if (!file) throw new Error("no .cpuprofile written");
      const { groups, functions, callers } = selfTimes(path.join(dir, file), callersOf);
      results.push({ label: scenario.label, requests: warm.requests + run.requests, times: groups, functions, callers });
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await dropDatabase(serverUrl, dbName);
  }
  // Whole-run profiles include the server's start-up: per-request figures overstate both sides
  // alike by a few hundredths of a millisecond. Compare the two columns, not absolutes.
  const groups = new Set(results.flatMap((r) => [...r.times.keys()]));
  const rows = [...groups].map((g) => ({ g, per: results.map((r) => (r.times.get(g) ?? 0) / Math.max(1, r.requests)) }));
  rows.sort((a, b) => (b.per[1] ?? 0) - (b.per[0] ?? 0) - ((a.per[1] ?? 0) - (a.per[0] ?? 0)));
  console.log(`| group | ${results.map((r) => `${r.label} ms/req`).join(" | ")} | difference |`);
  console.log(`|---|${results.map(() => "---:").join("|")}|---:|`);
  for (const r of rows.slice(0, 40)) console.log(`| ${r.g} | ${r.per.map((v) => v.toFixed(3)).join(" | ")} | ${((r.per[1] ?? 0) - (r.per[0] ?? 0)).toFixed(3)} |`);
  const total = (i: number) => rows.reduce((s, r) => s + (r.per[i] ?? 0), 0);
  console.log(`| **total** | ${results.map((_, i) => total(i).toFixed(3)).join(" | ")} | ${(total(1) - total(0)).toFixed(3)} |`);
  const fns = new Set(results.flatMap((r) => [...r.functions.keys()]));
  const fnRows = [...fns].map((f) => ({ f, per: results.map((r) => (r.functions.get(f) ?? 0) / Math.max(1, r.requests)) }));
  fnRows.sort((a, b) => (b.per[1] ?? 0) - (b.per[0] ?? 0) - ((a.per[1] ?? 0) - (a.per[0] ?? 0)));
  console.log(`\n| function (self) | ${results.map((r) => `${r.label} ms/req`).join(" | ")} | difference |`);
  console.log(`|---|${results.map(() => "---:").join("|")}|---:|`);
  for (const r of fnRows.slice(0, 40)) console.log(`| ${r.f} | ${r.per.map((v) => v.toFixed(3)).join(" | ")} | ${((r.per[1] ?? 0) - (r.per[0] ?? 0)).toFixed(3)} |`);
  if (callersOf) {
    for (const r of results) {
      console.log(`\n${callersOf} in ${r.label}, by caller chain (ms/req):`);
      const top = [...r.callers].sort((a, b) => b[1] - a[1]).slice(0, 12);
      for (const [chain, ms] of top) console.log(`  ${(ms / Math.max(1, r.requests)).toFixed(4)}  ${chain}`);
    }
  }
  console.log(`requests: ${results.map((r) => `${r.label} ${r.requests}`).join(", ")}`);
  return 0;
}
