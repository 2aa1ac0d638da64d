import { execFileSync, spawn, spawnSync } from "node:child_process";
import path from "node:path";

// The load generator: Debian's wrk (C, epoll), driven by the Lua scripts in bench/lua. Every
// script ends with a `done` function printing one JSON line, so nothing here scrapes wrk's
// human-readable output.

export const luaDir = path.join(import.meta.dirname, "lua");

export type WrkResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  // Socket errors and timeouts; non-2xx answers are counted in `statuses` instead.
  socketErrors: number;
  statuses: Record<string, number>;
  exhausted: number;
  pid: number;
};

export function ensureWrk(log: (msg: string) => void): string {
  const found = spawnSync("sh", ["-c", "command -v wrk"], { encoding: "utf8" });
  if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  log("wrk is missing; installing it from Debian (apt-get install -y wrk)…");
  try {
    execFileSync("apt-get", ["install", "-y", "-q", "wrk"], { stdio: ["ignore", "ignore", "inherit"] });
  } catch {
    execFileSync("apt-get", ["update", "-q"], { stdio: ["ignore", "ignore", "inherit"] });
    execFileSync("apt-get", ["install", "-y", "-q", "wrk"], { stdio: ["ignore", "ignore", "inherit"] });
  }
  return "wrk";
}

// Runs wrk once. `onStart` receives the wrk PID (the CPU sampler attributes its time).
export async function runWrk(options: {
  url: string;
  script: string;
  args: string[];
  connections: number;
  seconds: number;
  onStart?: (pid: number) => void;
}): Promise<WrkResult> {
  const threads = wrkThreads(options.connections);
  const argv = [
    `-t${threads}`,
    `-c${options.connections}`,
    `-d${Math.max(1, Math.round(options.seconds))}s`,
    "--timeout",
    "10s",
    "-s",
    path.join(luaDir, options.script),
    options.url,
    "--",
    ...options.args,
  ];
  const child = spawn("wrk", argv, { stdio: ["ignore", "pipe", "pipe"] });
  options.onStart?.(child.pid ?? 0);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const line = stdout.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (code !== 0 || !line) throw new Error(`wrk ${argv.join(" ")} failed (exit ${String(code)}):\n${stdout}\n${stderr}`);
  const raw = JSON.parse(line.slice("BENCH_JSON ".length)) as {
    requests: number;
    durationUs: number;
    p50Us: number;
    p90Us: number;
    p99Us: number;
    meanUs: number;
    maxUs: number;
    errors: Record<string, number>;
    statuses: Record<string, number>;
    exhausted: number;
  };
  const seconds = raw.durationUs / 1e6;
  return {
    requests: raw.requests,
    seconds,
    rps: raw.requests / seconds,
    p50Ms: raw.p50Us / 1000,
    p90Ms: raw.p90Us / 1000,
    p99Ms: raw.p99Us / 1000,
    meanMs: raw.meanUs / 1000,
    maxMs: raw.maxUs / 1000,
    socketErrors: Object.entries(raw.errors)
      .filter(([k]) => k !== "status")
      .reduce((sum, [, v]) => sum + v, 0),
    statuses: raw.statuses,
    exhausted: raw.exhausted,
    pid: child.pid ?? 0,
  };
}

// One wrk thread per 8 connections, at most 2: the machine has 2 cores and the server needs them.
export function wrkThreads(connections: number): number {
  return Math.max(1, Math.min(2, Math.ceil(connections / 8)));
}
