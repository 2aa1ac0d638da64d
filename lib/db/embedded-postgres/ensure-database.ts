import pg from "pg";
import { DB_NAME, DB_PASSWORD, DB_USER, HOST } from "./settings";

/** Creates the `tollgate` database on first start (initdb only creates `postgres`). */
export async function ensureDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: HOST, port, user: DB_USER, password: DB_PASSWORD, database: "postgres" });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DB_NAME]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(DB_NAME)}`);
  } finally {
    await client.end();
  }
}
