import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { env } from "@/lib/env";
import { metrics } from "@/lib/metrics/registry";
import { createHotSql, registerHotSql, type HotSql } from "@/lib/db/hot-sql";

// The one Prisma client of a server process (Next dev reloads modules, so keep it on globalThis).
const globalForDb = globalThis as unknown as { tollgateDb?: Db; tollgatePool?: pg.Pool; tollgateHotSql?: HotSql };

export type Db = PrismaClient;

export function createDb(connectionString: string, max = 20): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max }) });
}

export function db(): Db {
  if (!globalForDb.tollgateDb) {
    // A database host that drops packets would hold a request forever: after 10 s without a
    // connection (a new one, or a free one of the pool) the route answers 503, nothing stored.
    const pool = new pg.Pool({ connectionString: env().DATABASE_URL, max: env().DATABASE_POOL_SIZE, connectionTimeoutMillis: 10_000 });
    const client = new PrismaClient({ adapter: new PrismaPg(pool), log: [{ emit: "event", level: "query" }] });
    // The hot path's statements pipeline on connections of their own (lib/db/hot-sql.ts).
    const hotSql = createHotSql(env().DATABASE_URL, { connections: env().DATABASE_HOT_CONNECTIONS });
    registerHotSql(client, hotSql);
    globalForDb.tollgateHotSql = hotSql;
    // Every statement is counted (tollgate_db_queries_total): that is how a test proves the
    // hot path costs one database round trip per request.
    client.$on("query", () => metrics().dbQueries.inc());
    globalForDb.tollgateDb = client;
    globalForDb.tollgatePool = pool;
  }
  return globalForDb.tollgateDb;
}

// Closes the process's client and its connections (scripts that call route code in-process, e.g. the
// handler benchmark, must let go of their connections before dropping a database).
export async function closeDb(): Promise<void> {
  const { tollgateDb, tollgatePool, tollgateHotSql } = globalForDb;
  globalForDb.tollgateDb = undefined;
  globalForDb.tollgatePool = undefined;
  globalForDb.tollgateHotSql = undefined;
  await tollgateDb?.$disconnect();
  await tollgatePool?.end();
  await tollgateHotSql?.end();
}
