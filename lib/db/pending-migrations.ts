import { readdir } from "node:fs/promises";
import pg from "pg";

// The migrations of the folder that this database has not applied (all of them when it has no
// migrations table yet), in the order they would be applied.
export async function pendingMigrations(databaseUrl: string, migrationsDir: string): Promise<string[]> {
  const folder = (await readdir(migrationsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "tollgate-pending-migrations" });
  await client.connect();
  try {
    const applied = await client
      .query<{ name: string }>("SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL")
      .then((r) => new Set(r.rows.map((row) => row.name)))
      .catch((error: { code?: string }) => {
        if (error.code === "42P01") return new Set<string>(); // undefined_table: never migrated
        throw error;
      });
    return folder.filter((name) => !applied.has(name)).sort((a, b) => a.localeCompare(b));
  } finally {
    await client.end();
  }
}
