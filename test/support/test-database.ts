import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "@/lib/db/migrate";
import { migrationsDir } from "@/lib/cli/paths";

export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

// A fresh database migrated the way production is (lib/db/migrate.ts), used as a template.
export async function createTemplateDatabase(serverUrl: string): Promise<string> {
  const name = `tollgate_tpl_${randomBytes(4).toString("hex")}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  await migrate({ databaseUrl: databaseUrl(serverUrl, name), migrationsDir });
  return name;
}

export async function cloneDatabase(serverUrl: string, template: string): Promise<string> {
  const name = `tollgate_t_${randomBytes(6).toString("hex")}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  return name;
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
