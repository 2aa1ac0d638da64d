import { promises as fs } from "node:fs";
import path from "node:path";
import { isErrno } from "./errors";
import { findPostgresProcesses, isPostgresOf } from "./find-postgres-processes";
import { readProc, waitGone } from "./read-proc";
import { readServerState } from "./server-state";
import { shutDownPid } from "./shut-down-postgres";

/**
 * Called before every start: cleans up after a parent that was SIGKILLed
 * while postgres kept running (or crashed). A clean shutdown removes
 * postmaster.pid, so the normal path costs one failed readFile. Otherwise:
 *  - postmaster alive and still the child of the live process recorded in the
 *    state file -> the cluster is in use; refuse rather than kill it;
 *  - postmaster alive but orphaned, or detach()ed (no owner recorded) -> stale:
 *    fast-shutdown it and wait (stopEmbeddedPostgres() relies on this);
 *  - pid dead (or reused by an unrelated process) -> remove the stale pid file
 *    (postgres itself would refuse to start if the pid was reused);
 *  - finally kill orphaned backends of a SIGKILLed postmaster, which would
 *    otherwise block startup ("pre-existing shared memory block is still in use").
 */
export async function reclaimStaleServer(options: { dataDir: string; log: (msg: string) => void; why?: string }): Promise<void> {
  const { dataDir, log, why = "no live process owns it" } = options;
  const pidFile = path.join(dataDir, "postmaster.pid");
  let content: string;
  try {
    content = await fs.readFile(pidFile, "utf8");
  } catch (err) {
    if (isErrno(err, "ENOENT")) return;
    throw err;
  }
  const dataDirReal = await fs.realpath(dataDir);
  const lines = content.split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);

  if (Number.isInteger(pid) && pid > 0) {
    const info = await readProc(pid);
    if (await isPostgresOf(pid, dataDirReal, info)) {
      const { ownerPid } = await readServerState(dataDir);
      if (ownerPid !== undefined && info?.ppid === ownerPid) {
        throw new Error(
          `embedded postgres: ${dataDir} is in use by a running server (postmaster pid ${pid}, ` +
            `port ${lines[3]?.trim() ?? "?"}) started by live process ${ownerPid}; stop that process first`,
        );
      }
      log(`embedded postgres: stopping server pid ${pid} (${why})`);
      await shutDownPid(pid, log);
    } else {
      log(`embedded postgres: removing stale postmaster.pid (pid ${lines[0] ?? "?"} is not running postgres here)`);
    }
  }
  // A fast-shutdown postmaster deletes it itself; a dead one couldn't.
  await fs.rm(pidFile, { force: true });

  const orphans = await findPostgresProcesses(dataDirReal);
  if (orphans.length === 0) return;
  log(`embedded postgres: waiting for orphaned postgres processes ${orphans.join(", ")}`);
  // They exit on their own once they notice the postmaster died; force it if not.
  await Promise.all(
    orphans.map(async (orphan) => {
      if (await waitGone(orphan, 3_000)) return;
      try {
        process.kill(orphan, "SIGKILL");
      } catch {
        /* already gone */
      }
      await waitGone(orphan, 5_000);
    }),
  );
}
