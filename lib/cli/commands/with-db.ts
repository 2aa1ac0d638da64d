import { createDb, type Db } from "@/lib/db";
import { openDatabase } from "@/lib/cli/database";
import { migrate } from "@/lib/db/migrate";
import { pendingMigrations } from "@/lib/db/pending-migrations";
import { migrationsDir } from "@/lib/cli/paths";
import { CliError } from "@/lib/cli/commands/run-command";

// Opens the database, runs the body, then closes the client and lets go of the embedded server
// (stopped if this process was its last user). The embedded database (the developer's own) is
// migrated first, so every command sees the current schema. DATABASE_URL's is a deployment's:
// a one-shot command (`prune` from cron, `user create` from a laptop with a newer checkout) does
// not apply migrations to it under the running servers, DDL locks and re-declared hot-path
// functions included; it stops and says so, and `migrate` (or `start`, `worker`) applies them.
export async function withDb<T>(body: (db: Db, url: string) => Promise<T>): Promise<T> {
  const database = await openDatabase();
  const db = createDb(database.url, 4);
  try {
    if (database.embedded) await migrate({ databaseUrl: database.url, migrationsDir });
    else await assertMigrated(database.url);
    return await body(db, database.url);
  } finally {
    await db.$disconnect();
    await database.close();
  }
}

async function assertMigrated(url: string): Promise<void> {
  const pending = await pendingMigrations(url, migrationsDir);
  if (pending.length === 0) return;
  throw new CliError(
    `this database lacks ${pending.length} migration(s) of this checkout (${pending.slice(0, 3).join(", ")}${pending.length > 3 ? ", …" : ""}): ` +
      "apply them with `npm run tollgate -- migrate` when the servers are ready for them (deploying does), then run this again",
  );
}
