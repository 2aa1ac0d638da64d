import { spawnSync } from "node:child_process";
import path from "node:path";

const projectRoot = path.resolve(import.meta.dirname, "..", "..");

// `npm run tollgate -- <args>` as an operator (or cron) runs it, against one test database.
export function runCli(databaseUrl: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(path.join(projectRoot, "node_modules", ".bin", "tsx"), ["lib/cli/main.ts", ...args], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
