import { createDb, type Db } from "@/lib/db";
import { openDatabase } from "@/lib/cli/database";
import { migrate } from "@/lib/db/migrate";
import { migrationsDir } from "@/lib/cli/paths";

// Opens the database (migrating it first, so every command sees the current schema), runs
// the body, then closes the client and lets go of the embedded server (stopped if this process was its last user).
export async function withDb<T>(body: (db: Db, url: string) => Promise<T>): Promise<T> {
  const database = await openDatabase();
  const db = createDb(database.url, 4);
  try {
    await migrate({ databaseUrl: database.url, migrationsDir });
    return await body(db, database.url);
  } finally {
    await db.$disconnect();
    await database.close();
  }
}
