import { promises as fs } from "node:fs";
import path from "node:path";
import { loadBinaries } from "./binaries";
import { ensureDatabase } from "./ensure-database";
import { ensureOwnership } from "./ensure-ownership";
import { ensureTraversable } from "./ensure-traversable";
import { initDataDir } from "./init-data-dir";
import { launchWithPortRetry } from "./launch-with-port-retry";
import { reclaimStaleServer } from "./reclaim-stale-server";
import { resolveRunAs } from "./run-as-postgres-user";
import { readServerState, writeServerState } from "./server-state";
import { databaseUrl, HOST } from "./settings";

export type StartEmbeddedPostgresOptions = {
  /** PGDATA, e.g. `<project>/.tollgate/postgres`. Created/initialised if missing or empty. */
  dataDir: string;
  /** Receives launcher progress and postgres' own log lines. Default: discard. */
  log?: (msg: string) => void;
};

export type EmbeddedPostgresHandle = {
  /** `postgresql://tollgate:tollgate@127.0.0.1:<port>/tollgate` */
  databaseUrl: string;
  port: number;
  /** Fast shutdown; resolves when the server is gone. Safe to call repeatedly. */
  stop: () => Promise<void>;
  /**
   * Gives the server up: it keeps running when this process exits (no stop at exit, the
   * process may exit while it runs), and the state file no longer names an owner, so that
   * stopEmbeddedPostgres() - from any process - stops it instead of refusing. For servers
   * shared by several processes, which decide among themselves who stops it.
   */
  detach: () => Promise<void>;
};

export async function startEmbeddedPostgres(opts: StartEmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir);

  const bins = await loadBinaries(log);
  const runAs = resolveRunAs(log);
  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  if (runAs) await ensureTraversable([path.dirname(dataDir), bins.nativeDir], runAs, log);

  await reclaimStaleServer({ dataDir, log });
  const initialised = await initDataDir({ dataDir, bins, runAs, log });
  if (runAs && !initialised) await ensureOwnership(dataDir, runAs, log);

  const { port: preferredPort } = await readServerState(dataDir);
  const server = await launchWithPortRetry({ bins, dataDir, preferredPort, runAs, log });
  const { port } = server;

  // If the process exits (process.exit(), uncaught exception) without stop(),
  // ask postgres for a fast shutdown; it completes on its own after we are
  // gone. Only synchronous work is possible in 'exit', and kill() is sync.
  const onProcessExit = (): void => {
    server.signal("SIGINT");
  };
  process.on("exit", onProcessExit);
  let stopping: Promise<void> | undefined;
  let detached = false;
  void server.exited.then(() => {
    if (!stopping && !detached) log("embedded postgres: server exited unexpectedly");
  });

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await server.stop();
      process.off("exit", onProcessExit);
      await writeServerState(dataDir, { port }, log);
    })();
    return stopping;
  };

  const detach = async (): Promise<void> => {
    if (detached || stopping) return;
    detached = true;
    process.off("exit", onProcessExit);
    server.unref();
    await writeServerState(dataDir, { port, postmasterPid: server.pid }, log);
  };

  await writeServerState(dataDir, { port, ownerPid: process.pid, postmasterPid: server.pid }, log);
  try {
    await ensureDatabase(port);
  } catch (err) {
    await stop();
    throw err;
  }

  log(`embedded postgres: ready on ${HOST}:${port} (${dataDir})`);
  return { databaseUrl: databaseUrl(port), port, stop, detach };
}
