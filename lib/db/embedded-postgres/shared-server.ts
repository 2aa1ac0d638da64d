import { promises as fs } from "node:fs";
import path from "node:path";
import pg from "pg";
import { errMessage } from "./errors";
import { reclaimStaleServer } from "./reclaim-stale-server";
import { readServerState } from "./server-state";
import { databaseUrl } from "./settings";

// For a server this process holds no handle to: started by another process, or detached.

/**
 * The URL of the server last started on `dataDir` if it accepts a connection there and really
 * serves `dataDir`; otherwise why not. A recorded port proves nothing: the server may have died,
 * and another one (say another checkout's, same credentials) may have taken the port since.
 */
export async function probeEmbeddedPostgres(dataDir: string): Promise<{ url: string } | { problem: string }> {
  const { port } = await readServerState(path.resolve(dataDir));
  if (port === undefined) return { problem: "no server was started there yet" };
  const url = databaseUrl(port);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on("error", () => {}); // a connection lost after the probe is not our concern
  try {
    await client.connect();
    const { rows } = await client.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
    const served = rows[0]?.dir ?? "";
    const [a, b] = await Promise.all([served, dataDir].map((d) => fs.realpath(d).catch(() => path.resolve(d))));
    return a === b ? { url } : { problem: `port ${port} is served by another data dir (${served})` };
  } catch (err) {
    return { problem: `port ${port}: ${errMessage(err)}` };
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Stops the server running on `dataDir` by its postmaster.pid, and resolves once it is gone; a
 * no-op if none runs. Refuses (throws) if its launcher is alive and has not detach()ed it.
 * This is exactly reclaimStaleServer's clean-up: a server nobody owns is what it reclaims.
 */
export async function stopEmbeddedPostgres(opts: { dataDir: string; log?: (msg: string) => void }): Promise<void> {
  // Said on every ordinary stop: "no live process owns it" read like a fault on Ctrl-C.
  await reclaimStaleServer({ dataDir: path.resolve(opts.dataDir), log: opts.log ?? (() => {}), why: "its last user is stopping" });
}
