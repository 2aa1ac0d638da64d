// `prisma migrate deploy`, offline: apply prisma/migrations/*/migration.sql through the wasm
// schema engine, which records them in `_prisma_migrations` exactly like the CLI does, so
// the folder stays usable by anyone with the normal Prisma CLI.
import pg from "pg";
import { loadMigrations, NO_FILTER, withEngine } from "./schema-engine";
import { migrateJobQueue } from "../jobs/job-queue-schema";

// Our own advisory-lock key ("Toll" in ASCII). Deliberately not Prisma's 72707369: if the
// engine ever takes that one on its own connection, sharing it would deadlock against us.
const MIGRATE_LOCK_KEY = 0x546f6c6c;

export async function migrate(opts: {
  databaseUrl: string;
  migrationsDir: string;
  log?: (msg: string) => void;
}): Promise<{ applied: string[] }> {
  const log = opts.log ?? (() => {});
  // A dedicated session holds the lock: session-level advisory locks belong to a connection,
  // and the engine uses its own pool. If this process dies, PostgreSQL drops the lock with
  // the session. (Needs a direct/session connection, not a transaction-mode pooler.)
  const lockConn = new pg.Client({ connectionString: opts.databaseUrl, application_name: "tollgate-migrate-lock" });
  await lockConn.connect();
  try {
    const got = await lockConn.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [MIGRATE_LOCK_KEY]);
    if (!got.rows[0]?.ok) {
      log("another instance is migrating; waiting for the migration lock");
      await lockConn.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK_KEY]);
    }
    try {
      // Read the folder only once we hold the lock; whoever waited sees the rows the first
      // instance wrote and applies nothing (applyMigrations skips recorded migrations).
      const migrationsList = await loadMigrations(opts.migrationsDir);
      const { appliedMigrationNames } = await withEngine({ databaseUrl: opts.databaseUrl }, (engine) =>
        engine.applyMigrations({ migrationsList, filters: NO_FILTER }),
      );
      for (const name of appliedMigrationNames) log(`applied migration ${name}`);
      if (appliedMigrationNames.length === 0) log("database schema is up to date");
      // The job queue's own schema (graphile_worker), under the same lock: the outbox triggers
      // enqueue into it, so it must exist wherever our migrations do.
      await migrateJobQueue({ databaseUrl: opts.databaseUrl, log });
      return { applied: appliedMigrationNames };
    } finally {
      await lockConn.query("SELECT pg_advisory_unlock($1)", [MIGRATE_LOCK_KEY]);
    }
  } finally {
    await lockConn.end();
  }
}
