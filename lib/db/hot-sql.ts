import type pg from "pg";
import type { Db } from "@/lib/db";
import { metrics } from "@/lib/metrics/registry";

// The protocol's hot path (claim, heartbeat, complete; replays are claims) sends its one SQL
// statement straight to the pg pool Prisma itself runs on, as a named prepared statement:
// PostgreSQL parses and plans it once per connection, and the request skips Prisma's query
// pipeline, which the CPU profile (`npm run bench -- profile`) showed costing ~0.2 ms of the
// ~1.7 ms a claim adds over the liveness route. Everything else goes through Prisma.

export type HotStatement = { name: string; text: string };

const pools = new WeakMap<Db, pg.Pool>();

// Called by lib/db.ts for the server's client; other clients (CLI, tests, seed) fall back to Prisma.
export function registerHotPool(db: Db, pool: pg.Pool): void {
  pools.set(db, pool);
}

export async function hotQuery<T>(db: Db, statement: HotStatement, values: unknown[]): Promise<T[]> {
  const pool = pools.get(db);
  if (!pool) return db.$queryRawUnsafe<T[]>(statement.text, ...values);
  metrics().dbQueries.inc();
  return (await pool.query<T & pg.QueryResultRow>({ name: statement.name, text: statement.text, values })).rows;
}
