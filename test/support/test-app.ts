import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { inject } from "vitest";
import { nextServerArgs } from "@/lib/cli/next-server-args";
import { createDb, type Db } from "@/lib/db";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { createTenant } from "@/lib/tenants/create-tenant";
import { cloneDatabase, databaseUrl, dropDatabase } from "./test-database";

export const TEST_SECRET = "test-secret-key-0123456789abcdef0123456789";

export type Server = { baseUrl: string; process: ChildProcess; logs: string[] };

export type TestApp = {
  dbName: string;
  url: string;
  db: Db;
  servers: Server[];
  baseUrl: string;
  stop: () => Promise<void>;
};

// One test file's world: its own database cloned from the migrated template, and one or
// more real `next start` servers on it (two for the race tests).
export async function startTestApp(options: { instances?: number; env?: Record<string, string> } = {}): Promise<TestApp> {
  const serverUrl = inject("serverUrl");
  const dbName = await cloneDatabase(serverUrl, inject("templateDb"));
  const url = databaseUrl(serverUrl, dbName);
  const db = createDb(url, 5);
  const servers = await Promise.all(Array.from({ length: options.instances ?? 1 }, () => startServer(url, options.env ?? {})));
  return {
    dbName,
    url,
    db,
    servers,
    baseUrl: servers[0]!.baseUrl,
    stop: async () => {
      await Promise.all(servers.map(stopServer));
      await db.$disconnect();
      await dropDatabase(serverUrl, dbName);
    },
  };
}

export async function startServer(databaseUrl: string, env: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, nextServerArgs("start", port, "127.0.0.1"), {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TOLLGATE_SECRET_KEY: TEST_SECRET,
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_POOL_SIZE: "10",
      NEXT_DIST_DIR: inject("distDir"),
      // "{port}" in a value is the server's port (NEXTAUTH_URL names the server's own origin).
      ...Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value.replaceAll("{port}", String(port))])),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  const collect = (chunk: Buffer) => logs.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`next start exited early:\n${logs.join("\n")}`);
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) return { baseUrl, process: child, logs };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`next start did not become healthy:\n${logs.join("\n")}`);
}

export async function stopServer(server: Server): Promise<void> {
  if (server.process.exitCode !== null) return;
  const exited = new Promise((r) => server.process.once("exit", r));
  server.process.kill("SIGTERM");
  const timer = setTimeout(() => server.process.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export type TenantKeys = { tenantId: string; slug: string; admin: string; agent: string; approver: string; agent2: string };

// A tenant with one key per role (and a second agent principal) made through the same lib
// functions the CLI uses.
export async function seedTenant(db: Db, slug: string): Promise<TenantKeys> {
  const tenant = await createTenant({ db, slug, actor: "test" });
  const key = async (principal: string, role: "agent" | "approver" | "admin") =>
    (await createApiKey({ db, tenantId: tenant.id, input: { principal, role }, actor: "test" })).secret;
  return {
    tenantId: tenant.id,
    slug,
    admin: await key(`${slug}-admin`, "admin"),
    agent: await key(`${slug}-agent`, "agent"),
    approver: await key(`${slug}-approver`, "approver"),
    agent2: await key(`${slug}-agent-2`, "agent"),
  };
}
