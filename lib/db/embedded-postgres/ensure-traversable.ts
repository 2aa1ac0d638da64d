import { promises as fs, type Stats } from "node:fs";
import path from "node:path";
import type { RunAs } from "./run-as-postgres-user";
import { OS_USER } from "./settings";

/**
 * postgres runs as `postgres` and must be able to traverse every ancestor of
 * the binaries and of the data dir. (Node's spawn with uid/gid drops
 * supplementary groups, so only the primary gid counts.) When an ancestor is
 * not traversable we add the search bit for "others" (o+x: lets processes
 * pass through the directory by name, does NOT allow listing it) and log it,
 * instead of failing with postgres' opaque "Permission denied". That is a
 * deliberate change to directories outside the project, so it is logged.
 */
export async function ensureTraversable(dirs: string[], runAs: RunAs, log: (msg: string) => void): Promise<void> {
  const seen = new Set<string>();
  for (const dir of dirs) {
    for (let d = dir; !seen.has(d); d = path.dirname(d)) {
      seen.add(d);
      const st = await fs.stat(d);
      if (!canTraverse(st, runAs)) {
        await fs.chmod(d, (st.mode & 0o7777) | 0o001);
        log(`embedded postgres: ${d} was not traversable by user ${OS_USER}; added o+x (search only, no listing)`);
      }
    }
  }
}

function canTraverse(st: Stats, { uid, gid }: RunAs): boolean {
  if (st.uid === uid) return (st.mode & 0o100) !== 0;
  if (st.gid === gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}
