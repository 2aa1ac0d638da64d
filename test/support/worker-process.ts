import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { TEST_SECRET } from "./test-app";

// `npm run worker` as a real child process (node --import tsx, so the PID is the worker itself
// and SIGKILL kills the worker, not a wrapper), with test-sized intervals.
export type WorkerProcess = { process: ChildProcess; logs: string[]; poolId: string; stop: () => Promise<number | null>; kill: () => Promise<void> };

export const fastWorkerFlags = [
  "--tick-seconds", "0.5",
  "--recover-every-seconds", "0.5",
  "--abandoned-after-seconds", "1",
  "--delivery-base-ms", "200",
  "--delivery-cap-ms", "1000",
  "--delivery-timeout-ms", "3000",
  "--delivery-window-seconds", "4",
  "--poll-interval-ms", "250",
];

// The test receivers and providers listen on 127.0.0.1, which the egress policy refuses unless
// allowed; `egressAllow: ""` runs the worker with the production default (public addresses only).
// `env` adds to (or overrides) the worker's environment, TOLLGATE_SECRET_KEY included.
export async function startWorkerProcess(
  databaseUrl: string,
  flags: string[] = fastWorkerFlags,
  options: { egressAllow?: string; env?: Record<string, string> } = {},
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve("lib/cli/main.ts"), "worker", ...flags], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TOLLGATE_SECRET_KEY: TEST_SECRET,
      LOG_LEVEL: "info",
      TOLLGATE_EGRESS_ALLOW: options.egressAllow ?? "127.0.0.1/32",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  const collect = (chunk: Buffer) => logs.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const deadline = Date.now() + 60_000;
  let poolId: string | undefined;
  while (!poolId) {
    if (child.exitCode !== null) throw new Error(`worker exited early (${child.exitCode}):\n${logs.join("\n")}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`worker did not start:\n${logs.join("\n")}`);
    }
    poolId = logs.map((l) => /^Tollgate worker (\S+) is running/.exec(l)?.[1]).find(Boolean);
    if (!poolId) await new Promise((r) => setTimeout(r, 50));
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    process: child,
    logs,
    poolId,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}
