import { promises as fs } from "node:fs";
import path from "node:path";
import type { RunAs } from "./run-as-postgres-user";
import { OS_USER } from "./settings";

/** Postgres refuses a data dir it does not own ("wrong ownership"), e.g. after a `cp -r` as root. */
export async function ensureOwnership(dataDir: string, runAs: RunAs, log: (msg: string) => void): Promise<void> {
  const st = await fs.stat(dataDir);
  if (st.uid === runAs.uid && st.gid === runAs.gid) return;
  log(`embedded postgres: chown -R ${OS_USER} ${dataDir}`);
  await chownRecursive(dataDir, runAs);
}

async function chownRecursive(p: string, runAs: RunAs): Promise<void> {
  await fs.lchown(p, runAs.uid, runAs.gid);
  if (!(await fs.lstat(p)).isDirectory()) return;
  for (const name of await fs.readdir(p)) await chownRecursive(path.join(p, name), runAs);
}
