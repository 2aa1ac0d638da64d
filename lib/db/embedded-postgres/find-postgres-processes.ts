import { promises as fs } from "node:fs";
import { isGone, readProc, type ProcInfo } from "./read-proc";

/**
 * Is `pid` a live postgres process serving `dataDirReal`? The postmaster
 * chdir()s into its data dir (so its cwd identifies it; backends inherit it);
 * the `-D` argument is a fallback for when cwd isn't readable. This guards
 * against pid reuse - e.g. the system PostgreSQL on :5432 must never be hit.
 */
export async function isPostgresOf(pid: number, dataDirReal: string, info: ProcInfo | null): Promise<boolean> {
  if (isGone(info) || info?.comm !== "postgres") return false;
  const cwd = await fs.readlink(`/proc/${pid}/cwd`).catch(() => null);
  if (cwd !== null) return cwd === dataDirReal;
  const args = (await fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0");
  const d = args.includes("-D") ? args[args.indexOf("-D") + 1] : undefined;
  return d !== undefined && (await fs.realpath(d).catch(() => d)) === dataDirReal;
}

/** Every postgres process (postmaster or backend) serving `dataDirReal`. */
export async function findPostgresProcesses(dataDirReal: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (await isPostgresOf(pid, dataDirReal, await readProc(pid))) found.push(pid);
  }
  return found;
}
