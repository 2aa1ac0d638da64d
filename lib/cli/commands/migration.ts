import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { diffEmptyToSchema, diffMigrationsToSchema, hasStatements } from "@/lib/db/schema-diff";
import { openDatabase } from "@/lib/cli/database";
import { migrationsDir, schemaPath } from "@/lib/cli/paths";
import { CliError, parseFlags } from "@/lib/cli/commands/run-command";

// Developers: writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that
// takes the existing migrations to schema.prisma, offline (the Prisma CLI's `migrate dev`
// needs a native engine downloaded at run time, which these machines cannot fetch).
export async function migrationCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "create") throw new CliError("usage: migration create <name>");
  const { positionals } = parseFlags(rest, {}, 1);
  const name = positionals[0];
  if (!name || !/^[a-z0-9_]{1,60}$/.test(name)) throw new CliError("migration create needs a <name> of lowercase letters, digits and _");
  const existing = readdirSync(migrationsDir).filter((d) => /^\d{14}_/.test(d));
  let sql: string;
  if (existing.length === 0) {
    sql = await diffEmptyToSchema(schemaPath);
  } else {
    const database = await openDatabase();
    try {
      sql = await diffMigrationsToSchema({ databaseUrl: database.url, migrationsDir, schemaPath });
    } finally {
      await database.close();
    }
  }
  if (!hasStatements(sql)) {
    process.stdout.write("schema.prisma matches the migrations; nothing to write.\n");
    return 0;
  }
  // Migrations apply in name order: never write one that sorts before an existing one.
  const now = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const last = existing.sort().at(-1)?.slice(0, 14) ?? "0";
  const stamp = now > last ? now : String(BigInt(last) + 1n);
  const dir = path.join(migrationsDir, `${stamp}_${name}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "migration.sql"), sql);
  process.stdout.write(`Wrote ${path.relative(process.cwd(), dir)}/migration.sql — review it, then run: npm run tollgate -- migrate\n`);
  return 0;
}
