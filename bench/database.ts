import path from "node:path";
import pg from "pg";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { createDb } from "@/lib/db";
import { migrate } from "@/lib/db/migrate";
import { createTenant } from "@/lib/tenants/create-tenant";
import { putTool } from "@/lib/tools/put-tool";
import { toolDefinitionSchema } from "@/lib/tools/tool-schema";

// A fresh database on DATABASE_URL's server (or the local system PostgreSQL), migrated the way
// `npm start` migrates, with a tenant, keys and tools made by the same lib functions the CLI uses.

export const DEFAULT_SERVER_URL = "postgresql://postgres@127.0.0.1:5432/test";

export type BenchWorld = {
  databaseUrl: string;
  tenantId: string;
  agent: { secret: string; id: string; principal: string };
  // The tool every protocol request uses: a 3600 s lease, so 409 pools stay live all run long.
  tool: string;
  // Other tools and principals the seeded history is spread over.
  seedTools: string[];
  seedPrincipals: string[];
};

export function benchDatabaseName(startedAt: Date): string {
  return `tollgate_bench_${startedAt.toISOString().replace(/[-:TZ.]/g, "").slice(0, 14)}_${process.pid}`;
}

export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return withDatabase(serverUrl, name);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    // pool.end() resolves before its sockets are closed on the server's side; forcing the drop
    // at that moment terminates a connection the pool is still letting go of, and the pool
    // re-emits that error with nobody listening (a crash after the results were printed).
    // Give closing sessions a moment to leave before forcing out whatever is left.
    for (let waited = 0; waited < 3000; waited += 100) {
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name]);
      if ((rows[0]?.n ?? 0) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export async function prepareWorld(databaseUrl: string, migrationsDir = path.resolve("prisma", "migrations")): Promise<BenchWorld> {
  await migrate({ databaseUrl, migrationsDir });
  const db = createDb(databaseUrl, 2);
  try {
    const tenant = await createTenant({ db, slug: "bench", name: "Benchmark", actor: "bench" });
    const agentPrincipal = "bench-agent";
    const { key, secret } = await createApiKey({ db, tenantId: tenant.id, input: { principal: agentPrincipal, role: "agent" }, actor: "bench" });
    await createApiKey({ db, tenantId: tenant.id, input: { principal: "bench-admin", role: "admin" }, actor: "bench" });
    const tool = "bench.charge";
    const seedTools = [tool, "bench.email", "bench.refund"];
    for (const name of seedTools) {
      const definition = toolDefinitionSchema.parse({
        description: `benchmark tool ${name}`,
        policy: { leaseSeconds: name === tool ? 3600 : 60, maxAttempts: 3 },
      });
      await putTool({ db, tenantId: tenant.id, name, definition, actor: "bench" });
    }
    return {
      databaseUrl,
      tenantId: tenant.id,
      agent: { secret, id: key.id, principal: agentPrincipal },
      tool,
      seedTools,
      seedPrincipals: [agentPrincipal, "bench-agent-2", "bench-agent-3", "bench-agent-4"],
    };
  } finally {
    await db.$disconnect();
  }
}
