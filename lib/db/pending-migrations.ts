import { readdir } from "node:fs/promises";
import pg from "pg";
import { appliedMigrations } from "@/lib/db/migrate";

// The migrations of the folder that this database has not applied (all of them when it has no
// migrations table yet), in the order they would be applied.
export async function pendingMigrations(databaseUrl: string, migrationsDir: string): Promise<string[]> {
  const folder = (await readdir(migrationsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "tollgate-pending-migrations" });
  await client.connect();
  try {
    const applied = await appliedMigrations(client)
      .then((rows) => new Set(rows.map((row) => row.migration_name)))
      .catch((error: { code?: string }) => {
        if (error.code === "42P01") return new Set<string>(); // undefined_table: never migrated
        throw error;
      });
    return folder.filter((name) => !applied.has(name)).sort((a, b) => a.localeCompare(b));
  } finally {
    await client.end();
  }
}
