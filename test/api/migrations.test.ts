import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { migrate } from "@/lib/db/migrate";
import { diffDatabaseToSchema, diffMigrationsToSchema, hasStatements } from "@/lib/db/schema-diff";
import { adminQuery, databaseUrl, dropDatabase } from "../support/test-database";

// The offline migrator must do what `prisma migrate deploy` does: an empty database migrated
// from prisma/migrations is exactly schema.prisma (no drift), each migration is applied once
// even when several instances start together, and a second run is a no-op.

const projectRoot = path.resolve(import.meta.dirname, "..", "..");
const migrationsDir = path.join(projectRoot, "prisma", "migrations");
const schemaPath = path.join(projectRoot, "prisma", "schema.prisma");
const migrationFolders = readdirSync(migrationsDir, { withFileTypes: true })
  .filter((e) => e.isDirectory() && /^\d{14}_/.test(e.name))
  .map((e) => e.name)
  .sort();

const serverUrl = inject("serverUrl");
const created: string[] = [];

async function emptyDatabase(): Promise<string> {
  const name = `tollgate_mig_${randomBytes(6).toString("hex")}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  created.push(name);
  return databaseUrl(serverUrl, name);
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

type MigrationRow = { migration_name: string; finished_at: Date | null; rolled_back_at: Date | null; applied_steps_count: number };
const migrationRows = (url: string) =>
  query<MigrationRow>(url, "SELECT migration_name, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name");

afterAll(async () => {
  for (const name of created) await dropDatabase(serverUrl, name);
});

describe("migrations", () => {
  it("has migration folders to apply", () => {
    expect(migrationFolders.length).toBeGreaterThan(0);
  });

  it("an empty database migrated by migrate() has no drift from schema.prisma", async () => {
    const url = await emptyDatabase();
    // The drift check must be able to see drift at all: an empty database is all drift.
    expect(hasStatements(await diffDatabaseToSchema({ databaseUrl: url, schemaPath }))).toBe(true);

    const { applied } = await migrate({ databaseUrl: url, migrationsDir });

    expect(applied).toEqual(migrationFolders);
    const drift = await diffDatabaseToSchema({ databaseUrl: url, schemaPath });
    expect(hasStatements(drift), `drift between the migrated database and schema.prisma:\n${drift}`).toBe(false);
    // The hand-written SQL (protocol functions, CHECKs) ran too; schema.prisma cannot describe it.
    const functions = await query<{ proname: string }>(url, "SELECT proname FROM pg_proc WHERE proname IN ('tollgate_claim', 'tollgate_op_view') ORDER BY proname");
    expect(functions.map((f) => f.proname)).toEqual(["tollgate_claim", "tollgate_op_view"]);
  });

  it("the migrations folder produces exactly schema.prisma (diffMigrationsToSchema is empty)", async () => {
    const url = await emptyDatabase();

    const missing = await diffMigrationsToSchema({ databaseUrl: url, migrationsDir, schemaPath });

    expect(hasStatements(missing), `schema.prisma has changes no migration contains:\n${missing}`).toBe(false);
  });

  it("two concurrent migrate() calls on one empty database both succeed and apply each migration once", async () => {
    const url = await emptyDatabase();

    const [first, second] = await Promise.all([migrate({ databaseUrl: url, migrationsDir }), migrate({ databaseUrl: url, migrationsDir })]);

    // One instance applied everything while the other waited for the lock and found nothing left.
    expect([...first.applied, ...second.applied].sort()).toEqual(migrationFolders);
    const rows = await migrationRows(url);
    expect(rows.map((r) => r.migration_name)).toEqual(migrationFolders);
    for (const row of rows) {
      expect(row.finished_at).not.toBeNull();
      expect(row.rolled_back_at).toBeNull();
    }
  });

  // A LANGUAGE sql function that PostgreSQL cannot inline (its body writes, or reads FROM a
  // table) is parsed and planned again in every transaction that calls it; plpgsql keeps its
  // plans per connection. The hot path's helpers are one or the other for that reason
  // (migration 20261130060000), and a new helper must not quietly cost a parse per request.
  it("every LANGUAGE sql function is a single SELECT of expressions, which PostgreSQL inlines", async () => {
    const url = await emptyDatabase();
    await migrate({ databaseUrl: url, migrationsDir });

    const sqlFunctions = await query<{ proname: string; prosrc: string }>(
      url,
      `SELECT p.proname, p.prosrc FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
       WHERE l.lanname = 'sql' AND p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'tollgate%' ORDER BY p.proname`,
    );

    expect(sqlFunctions.map((f) => f.proname)).toContain("tollgate_op_view");
    const notInlinable = sqlFunctions.filter((f) => !/^\s*SELECT\b/i.test(f.prosrc) || /\b(FROM|INSERT|UPDATE|DELETE)\s/i.test(f.prosrc.replace(/extract\(\s*\w+\s+FROM/gi, "")));
    expect(notInlinable.map((f) => f.proname)).toEqual([]);
    const helpers = await query<{ proname: string; lanname: string }>(
      url,
      `SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
       WHERE p.proname IN ('tollgate_audit', 'tollgate_count_conflict', 'tollgate_event_subscribers', 'tollgate_webhook_event_audit') ORDER BY p.proname`,
    );
    expect(helpers).toEqual(["tollgate_audit", "tollgate_count_conflict", "tollgate_event_subscribers", "tollgate_webhook_event_audit"].map((proname) => ({ proname, lanname: "plpgsql" })));
  });

  it("a second migrate() applies nothing and writes no rows", async () => {
    const url = await emptyDatabase();
    await migrate({ databaseUrl: url, migrationsDir });
    const before = await migrationRows(url);

    const again = await migrate({ databaseUrl: url, migrationsDir });

    expect(again.applied).toEqual([]);
    expect(await migrationRows(url)).toEqual(before);
    expect(before).toHaveLength(migrationFolders.length);
  });

  // Re-review: a migration edited after a database applied it left that database without the
  // change (a function the code then called), while migrate() said "up to date".
  it("says which applied migration was edited since, and only that one", async () => {
    const url = await emptyDatabase();
    const warnings: string[] = [];
    await migrate({ databaseUrl: url, migrationsDir, warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    const last = migrationFolders.at(-1)!;
    await query(url, `UPDATE _prisma_migrations SET checksum = repeat('0', 64) WHERE migration_name = '${last}'`);

    await migrate({ databaseUrl: url, migrationsDir, warn: (m) => warnings.push(m) });

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^migration ${last} was changed after it was applied to this database`));
  });
});
