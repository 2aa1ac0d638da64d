// `prisma migrate diff`, offline, through the wasm schema engine. Every function returns an
// executable SQL script; with no differences the engine returns only a comment
// ("-- This is an empty migration."), which `hasStatements` recognises.
// Objects schema.prisma cannot model (functions, triggers, CHECK constraints) are not
// compared, so hand-written SQL of that kind in a migration never shows up as drift.
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { DiffTarget, SchemaContainer } from "@prisma/schema-engine-wasm/schema_engine_bg";
import { loadMigrations, NO_FILTER, withEngine } from "./schema-engine";

/** schema.prisma, or a folder of *.prisma files (Prisma's multi-file schema). */
async function readSchema(schemaPath: string): Promise<SchemaContainer[]> {
  const abs = path.resolve(schemaPath);
  if (!(await stat(abs)).isDirectory()) return [{ path: abs, content: await readFile(abs, "utf8") }];
  const entries = await readdir(abs, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith(".prisma"))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
  return Promise.all(files.map(async (p) => ({ path: p, content: await readFile(p, "utf8") })));
}

async function diff(databaseUrl: string | undefined, from: DiffTarget, to: DiffTarget): Promise<string> {
  const { stdout } = await withEngine({ databaseUrl }, (engine) =>
    engine.diff({ from, to, script: true, exitCode: null, filters: NO_FILTER }),
  );
  return stdout ?? "";
}

/** True when a diff script contains anything besides comments and blank lines. */
export function hasStatements(sql: string): boolean {
  return sql.split("\n").some((line) => line.trim() !== "" && !line.trim().startsWith("--"));
}

/** SQL creating schema.prisma from nothing: the very first migration. No database at all. */
export async function diffEmptyToSchema(schemaPath: string): Promise<string> {
  return diff(undefined, { tag: "empty" }, { tag: "schemaDatamodel", files: await readSchema(schemaPath) });
}

/**
 * SQL taking "all migrations applied" to schema.prisma: the next migration to write, or
 * empty when the migrations already match the schema. The engine replays the migrations in
 * a temporary shadow database that it creates next to `databaseUrl` (so the role needs
 * CREATEDB) and drops afterwards; `databaseUrl` itself is not modified.
 */
export async function diffMigrationsToSchema(opts: {
  databaseUrl: string;
  migrationsDir: string;
  schemaPath: string;
}): Promise<string> {
  const migrations = await loadMigrations(opts.migrationsDir);
  const files = await readSchema(opts.schemaPath);
  return diff(opts.databaseUrl, { tag: "migrations", ...migrations }, { tag: "schemaDatamodel", files });
}

/**
 * SQL taking the live database at `databaseUrl` to schema.prisma (drift check; no shadow
 * database). `_prisma_migrations` is ignored by the engine. The wasm engine rejects
 * `{ tag: "url" }` targets; `schemaDatasource` means "the database of the engine's adapter".
 */
export async function diffDatabaseToSchema(opts: { databaseUrl: string; schemaPath: string }): Promise<string> {
  const files = await readSchema(opts.schemaPath);
  // configDir only matters for relative paths (e.g. SSL certificates) in the datasource.
  const configDir = path.dirname(files[0]?.path ?? path.resolve(opts.schemaPath));
  const from: DiffTarget = { tag: "schemaDatasource", files, configDir };
  return diff(opts.databaseUrl, from, { tag: "schemaDatamodel", files });
}
