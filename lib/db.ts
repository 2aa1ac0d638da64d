import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { env } from "@/lib/env";
import { metrics } from "@/lib/metrics/registry";

// The one Prisma client of a server process (Next dev reloads modules, so keep it on globalThis).
const globalForDb = globalThis as unknown as { tollgateDb?: Db };

export type Db = PrismaClient;

export function createDb(connectionString: string, max = 20): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max }) });
}

export function db(): Db {
  if (!globalForDb.tollgateDb) {
    const client = new PrismaClient({
      adapter: new PrismaPg({ connectionString: env().DATABASE_URL, max: env().DATABASE_POOL_SIZE }),
      log: [{ emit: "event", level: "query" }],
    });
    // Every statement is counted (tollgate_db_queries_total): that is how a test proves the
    // hot path costs one database round trip per request.
    client.$on("query", () => metrics().dbQueries.inc());
    globalForDb.tollgateDb = client;
  }
  return globalForDb.tollgateDb;
}
