// `prisma migrate deploy`, offline: apply prisma/migrations/*/migration.sql through the wasm
// schema engine, which records them in `_prisma_migrations` exactly like the CLI does, so
// the folder stays usable by anyone with the normal Prisma CLI.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
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
  warn?: (msg: string) => void;
}): Promise<{ applied: string[] }> {
  const log = opts.log ?? (() => {});
  const warn = opts.warn ?? ((msg: string) => process.stderr.write(`warning: ${msg}\n`));
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
      for (const name of await editedAfterApplying(lockConn, opts.migrationsDir)) {
        warn(
          `migration ${name} was changed after it was applied to this database: the change is not in it. ` +
            "Put a schema change in a new migration, never in one a database has applied (or rebuild this database).",
        );
      }
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

// Applied migrations whose file no longer has the checksum recorded when it was applied (Prisma
// records the SHA-256 of migration.sql). The engine skips an applied migration by name, so an
// edit to one never reaches a database that ran it; said loudly, not silently "up to date"
// (re-review: an edited migration left databases without a function the code then called).
async function editedAfterApplying(conn: pg.Client, dir: string): Promise<string[]> {
  const edited: string[] = [];
  for (const row of await appliedMigrations(conn)) {
    const text = await readFile(path.join(dir, row.migration_name, "migration.sql")).catch(() => null);
    if (text && createHash("sha256").update(text).digest("hex") !== row.checksum) edited.push(row.migration_name);
  }
  return edited.sort();
}

// The migrations this database has applied (finished, not rolled back), with the checksum of each.
export async function appliedMigrations(conn: pg.ClientBase): Promise<{ migration_name: string; checksum: string }[]> {
  const { rows } = await conn.query<{ migration_name: string; checksum: string }>(
    "SELECT migration_name, checksum FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
  );
  return rows;
}
