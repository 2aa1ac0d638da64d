import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { env } from "@/lib/env";

// The one Prisma client of a server process (Next dev reloads modules, so keep it on globalThis).
const globalForDb = globalThis as unknown as { tollgateDb?: PrismaClient };

export function createDb(connectionString: string, max = 20): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max }) });
}

export function db(): PrismaClient {
  if (!globalForDb.tollgateDb) {
    globalForDb.tollgateDb = createDb(env().DATABASE_URL, env().DATABASE_POOL_SIZE);
  }
  return globalForDb.tollgateDb;
}

export type Db = PrismaClient;
