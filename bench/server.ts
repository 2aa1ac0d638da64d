import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { nextServerArgs } from "@/lib/cli/next-server-args";

// One real `next start` (the production server), started by the PID of node itself (not npx,
// which would leave next-server behind), and stopped by that PID.

export type BenchServer = { baseUrl: string; pid: number; logs: string[]; stop: () => Promise<void> };

// nodeArgs: extra flags for node itself (e.g. --cpu-prof to see where a request's time goes).
export async function startServer(options: { databaseUrl: string; distDir: string; secret: string; nodeArgs?: string[] }): Promise<BenchServer> {
  const port = await freePort();
  // BENCH_FRONT_DOOR=0 starts the server without lib/http/front-door.cjs, for an A/B of its cost.
  const serverArgs = nextServerArgs("start", port, "127.0.0.1");
  const args = process.env.BENCH_FRONT_DOOR === "0" ? serverArgs.slice(2) : serverArgs;
  const child = spawn(process.env.BENCH_SERVER_NODE || process.execPath, [...(options.nodeArgs ?? []), ...args], {
    env: {
      ...process.env,
      NODE_ENV: "production",
      NEXT_DIST_DIR: options.distDir,
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: options.databaseUrl,
      TOLLGATE_SECRET_KEY: options.secret,
      // One JSON line per request to a pipe would measure the logger, not the protocol.
      LOG_LEVEL: "warn",
      // The server's pool size (the default, 20, unless BENCH_POOL_SIZE says otherwise): for experiments.
      DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE ?? "20",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  const collect = (chunk: Buffer) => {
    logs.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    if (logs.length > 500) logs.splice(0, logs.length - 500);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = () => stopChild(child);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`next start exited early:\n${logs.join("\n")}`);
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) return { baseUrl, pid: child.pid ?? 0, logs, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`next start did not become healthy within 60 s:\n${logs.join("\n")}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

// The server's own count of SQL statements and of requests per route (GET /api/metrics), so the
// bench can print statements per request for each scenario.
export async function serverCounters(baseUrl: string): Promise<{ dbQueries: number; requests: number; heapUsedBytes: number }> {
  const text = await (await fetch(`${baseUrl}/api/metrics`)).text();
  let dbQueries = 0;
  let requests = 0;
  let heapUsedBytes = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("tollgate_db_queries_total ")) dbQueries = Number(line.split(" ")[1]);
    if (line.startsWith("tollgate_nodejs_heap_size_used_bytes ")) heapUsedBytes = Number(line.split(" ")[1]);
    if (line.startsWith("tollgate_http_requests_total{")) requests += Number(line.split(" ").at(-1));
  }
  return { dbQueries, requests, heapUsedBytes };
}
