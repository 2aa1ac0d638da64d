import path from "node:path";
import { probeEmbeddedPostgres, startEmbeddedPostgres, stopEmbeddedPostgres } from "@/lib/db/embedded-postgres";
import { sleep } from "@/lib/db/embedded-postgres/with-timeout";
import { localDir } from "@/lib/cli/paths";
import { register, type Registration } from "@/lib/cli/embedded-users";

export type Database = { url: string; embedded: boolean; close: () => Promise<void> };

const dataDir = path.join(localDir, "postgres");
const usersDir = path.join(localDir, "postgres-users");
/** How long to wait for another process to finish starting or stopping the server. */
const WAIT_MS = 180_000;

// DATABASE_URL if set. Otherwise the embedded PostgreSQL under .tollgate/postgres, shared by
// every Tollgate process that uses it (`npm start`, workers, one-shot commands) and stopped
// when the LAST of them closes, whichever started it. Nobody owns it: the starter detach()es it
// at once, so it outlives the starter and anyone may stop it by its postmaster.pid.
//
// Each process registers in .tollgate/postgres-users/ (embedded-users.ts) and changes its state
// there at every step. Both sides of each race announce themselves BEFORE looking at the others
// (a state file is in place before the directory is read), so of two processes racing at least
// one sees the other:
//  - a closer marks itself `closing`, then stops the server only if every other live process is
//    closing too; an opener registers (`opening`), then waits until no live process is closing.
//    So either the closer sees the opener and leaves the server running, or the opener sees the
//    closer and waits for the stop to finish before it looks for (and then starts) a server.
//  - two closers at once: each may see the other closing, and then both stop it (harmless: the
//    second finds it stopping or gone). Neither can conclude that the other keeps it running.
//  - two starters at once: each marks itself `starting`, then backs off if it sees another one,
//    and the one left looks for a server once more (one may have come up meanwhile) before it
//    starts one. So at most one starts; the others find its server. (Both may back off: jitter.)
// Crashed processes are skipped (pid gone or recycled, see embedded-users.ts). The rule is: never
// stop (or reclaim) the server under a live user; when in doubt leave it running. So it is not
// guaranteed to stop: a process that dies without close() (SIGKILL, an unhandled Ctrl-C) cannot
// stop it, nor does a closer that saw an opener which then failed. It keeps running until the
// next Tollgate process, which shares it and stops it when it is the last to close. All this
// needs .tollgate/ on a local file system (atomic rename, directory reads that see it).
export async function openDatabase(options: { log?: (msg: string) => void } = {}): Promise<Database> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) return { url: fromEnv, embedded: false, close: async () => undefined };

  const log = options.log ?? (() => {});
  const me = await register(usersDir, "opening");
  let url: string;
  try {
    url = await findOrStartServer(me, log);
    await me.set("using");
  } catch (err) {
    await me.remove();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return { url, embedded: true, close: () => (closing ??= release(me, log)) };
}

async function findOrStartServer(me: Registration, log: (msg: string) => void): Promise<string> {
  for (;;) {
    await me.waitWhileOthers("closing", WAIT_MS);
    // Share the recorded server only if it answers: its processes may have crashed since.
    const probe = await probeEmbeddedPostgres(dataDir);
    if ("url" in probe) return probe.url;

    await me.set("starting");
    if ((await me.others()).some((u) => u.state === "starting")) {
      await me.set("opening");
      await me.waitWhileOthers("starting", WAIT_MS);
      await sleep(50 + Math.random() * 250);
      continue;
    }
    // We alone may start one now, but a starter may have finished since we looked: look again.
    const again = await probeEmbeddedPostgres(dataDir);
    if ("url" in again) return again.url;
    // Starting one reclaims whatever server is left on the data dir: never under live users.
    const users = (await me.others()).filter((u) => u.state === "using");
    if (users.length > 0) {
      throw new Error(
        `embedded postgres: ${dataDir} is in use by process ${users.map((u) => u.pid).join(", ")} ` +
          `but does not accept connections (${again.problem}); stop those processes and retry`,
      );
    }
    const server = await startEmbeddedPostgres({ dataDir, log });
    await server.detach();
    return server.databaseUrl;
  }
}

async function release(me: Registration, log: (msg: string) => void): Promise<void> {
  await me.set("closing");
  try {
    if ((await me.others()).every((u) => u.state === "closing")) await stopEmbeddedPostgres({ dataDir, log });
  } finally {
    await me.remove();
  }
}
