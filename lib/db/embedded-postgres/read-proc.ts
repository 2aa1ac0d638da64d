import { promises as fs } from "node:fs";
import { sleep } from "./with-timeout";

/** `startTime`: clock ticks after boot; with the pid it identifies a process even once the pid is reused. */
export type ProcInfo = { comm: string; state: string; ppid: number; startTime: number };

/** From /proc/<pid>/stat; null if there is no such process. */
export async function readProc(pid: number): Promise<ProcInfo | null> {
  let stat: string;
  try {
    stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // "pid (comm) state ppid ... starttime(22nd) ..."; comm may contain spaces/parens -> use lastIndexOf.
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  const rest = stat.slice(close + 2).split(" ");
  return { comm: stat.slice(open + 1, close), state: rest[0] ?? "", ppid: Number(rest[1]), startTime: Number(rest[19]) };
}

/** Zombies count as gone: an orphaned postmaster is reparented to PID 1, which may never reap it. */
export function isGone(info: ProcInfo | null): boolean {
  return info === null || info.state === "Z" || info.state === "X";
}

/** true once `pid` is gone, false if it is still there after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (isGone(await readProc(pid))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}
