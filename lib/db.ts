import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { env } from "@/lib/env";
import { metrics } from "@/lib/metrics/registry";
import { registerHotPool } from "@/lib/db/hot-sql";

// The one Prisma client of a server process (Next dev reloads modules, so keep it on globalThis).
const globalForDb = globalThis as unknown as { tollgateDb?: Db; tollgatePool?: pg.Pool };

export type Db = PrismaClient;

export function createDb(connectionString: string, max = 20): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max }) });
}

export function db(): Db {
  if (!globalForDb.tollgateDb) {
    // One pool for Prisma and the hot path's prepared statements (lib/db/hot-sql.ts).
    const pool = new pg.Pool({ connectionString: env().DATABASE_URL, max: env().DATABASE_POOL_SIZE });
    const client = new PrismaClient({ adapter: new PrismaPg(pool), log: [{ emit: "event", level: "query" }] });
    registerHotPool(client, pool);
    // Every statement is counted (tollgate_db_queries_total): that is how a test proves the
    // hot path costs one database round trip per request.
    client.$on("query", () => metrics().dbQueries.inc());
    globalForDb.tollgateDb = client;
    globalForDb.tollgatePool = pool;
  }
  return globalForDb.tollgateDb;
}

// Closes the process's client and its pool (scripts that call route code in-process, e.g. the
// handler benchmark, must let go of their connections before dropping a database).
export async function closeDb(): Promise<void> {
  const { tollgateDb, tollgatePool } = globalForDb;
  globalForDb.tollgateDb = undefined;
  globalForDb.tollgatePool = undefined;
  await tollgateDb?.$disconnect();
  await tollgatePool?.end();
}
