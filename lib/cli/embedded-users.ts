import { promises as fs } from "node:fs";
import path from "node:path";
import { isErrno } from "@/lib/db/embedded-postgres/errors";
import { isGone, readProc } from "@/lib/db/embedded-postgres/read-proc";
import { sleep } from "@/lib/db/embedded-postgres/with-timeout";

// The processes using the embedded PostgreSQL, one file each in a directory (see database.ts for
// the protocol built on them). A file is named <pid>-<start time>.json: with the start time a
// recycled pid names a different file, so a crashed process's file can be deleted by anyone
// without ever deleting a live process's. Each state change is written whole under a temporary
// name and renamed into place, so readers see the old state or the new one, never half a file.

/** opening: looking for a server; starting: launching one; using: has one; closing: done with it. */
export type UserState = "opening" | "starting" | "using" | "closing";
export type User = { pid: number; startTime: number; state: UserState };

export type Registration = {
  set: (state: UserState) => Promise<void>;
  /** The other live registered processes (dead ones' files are deleted on the way). */
  others: () => Promise<User[]>;
  /** Until no other live process is in `state`; throws after `timeoutMs`. */
  waitWhileOthers: (state: UserState, timeoutMs: number) => Promise<void>;
  remove: () => Promise<void>;
};

export async function register(dir: string, state: UserState): Promise<Registration> {
  await fs.mkdir(dir, { recursive: true });
  // 0 where there is no /proc: then liveness rests on the pid alone.
  const me: User = { pid: process.pid, startTime: (await readProc(process.pid))?.startTime ?? 0, state };
  const file = path.join(dir, `${me.pid}-${me.startTime}.json`);

  const set = async (next: UserState): Promise<void> => {
    me.state = next;
    await fs.writeFile(`${file}.tmp`, JSON.stringify(me));
    await fs.rename(`${file}.tmp`, file);
  };
  const others = async (): Promise<User[]> => {
    const found: User[] = [];
    for (const name of await fs.readdir(dir)) {
      const m = /^(\d+)-(\d+)\.json(\.tmp)?$/.exec(name);
      if (!m) continue;
      const pid = Number(m[1]);
      const startTime = Number(m[2]);
      if (pid === me.pid) continue;
      if (!(await isAlive(pid, startTime))) {
        await fs.rm(path.join(dir, name), { force: true });
        continue;
      }
      if (m[3]) continue; // a write in progress: the .json beside it still holds that process's state
      const user = await readUser(path.join(dir, name));
      if (user) found.push(user);
    }
    return found;
  };
  const waitWhileOthers = async (state: UserState, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const busy = (await others()).filter((u) => u.state === state);
      if (busy.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(`embedded postgres: gave up waiting for process ${busy.map((u) => u.pid).join(", ")} (${state})`);
      }
      await sleep(100);
    }
  };
  const remove = async (): Promise<void> => {
    await fs.rm(file, { force: true });
  };

  await set(state);
  return { set, others, waitWhileOthers, remove };
}

async function readUser(file: string): Promise<User | null> {
  try {
    return JSON.parse(await fs.readFile(file, "utf8")) as User;
  } catch (err) {
    if (isErrno(err, "ENOENT")) return null; // unregistered since readdir
    // Unreadable (disk full when it was written?): assume it may use the server, so nobody stops it.
    const [pid, startTime] = path.basename(file, ".json").split("-").map(Number);
    return { pid: pid ?? 0, startTime: startTime ?? 0, state: "opening" };
  }
}

// EPERM means the process exists but belongs to another user: alive. A different start time
// means the pid was recycled: the registered process is gone.
async function isAlive(pid: number, startTime: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (!isErrno(err, "EPERM")) return false;
  }
  const info = await readProc(pid);
  if (info === null) return true; // no /proc to ask: trust kill()
  return !isGone(info) && (startTime === 0 || info.startTime === startTime);
}
