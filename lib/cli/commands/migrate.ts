import { openDatabase } from "@/lib/cli/database";
import { migrate } from "@/lib/db/migrate";
import { migrationsDir } from "@/lib/cli/paths";
import { parseFlags } from "@/lib/cli/commands/run-command";

export async function migrateCommand(args: string[]): Promise<number> {
  parseFlags(args, {});
  const database = await openDatabase();
  try {
    const { applied } = await migrate({ databaseUrl: database.url, migrationsDir });
    process.stdout.write(applied.length ? `Applied ${applied.length} migration(s): ${applied.join(", ")}\n` : "Database is up to date.\n");
    return 0;
  } finally {
    await database.close();
  }
}
