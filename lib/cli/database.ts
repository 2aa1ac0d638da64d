import { readFileSync, writeFileSync, rmSync, mkdirSync } from "node:fs";
import path from "node:path";
import { startEmbeddedPostgres } from "@/lib/db/embedded-postgres";
import { localDir } from "@/lib/cli/paths";

export type Database = { url: string; embedded: boolean; close: () => Promise<void> };

const ownerFile = path.join(localDir, "postgres-owner.json");

// DATABASE_URL if set. Otherwise the embedded PostgreSQL under .tollgate/postgres: if another
// live Tollgate process (say a running `npm start`) already serves it, share that server
// instead of restarting it; a server whose owner died is stale and is restarted.
export async function openDatabase(options: { log?: (msg: string) => void } = {}): Promise<Database> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) return { url: fromEnv, embedded: false, close: async () => undefined };

  const owner = readOwner();
  if (owner && owner.pid !== process.pid && isAlive(owner.pid)) {
    return { url: owner.url, embedded: true, close: async () => undefined };
  }
  mkdirSync(localDir, { recursive: true });
  const server = await startEmbeddedPostgres({ dataDir: path.join(localDir, "postgres"), log: options.log });
  writeFileSync(ownerFile, JSON.stringify({ pid: process.pid, url: server.databaseUrl }), { mode: 0o600 });
  let closed = false;
  return {
    url: server.databaseUrl,
    embedded: true,
    close: async () => {
      if (closed) return;
      closed = true;
      await server.stop();
      rmSync(ownerFile, { force: true });
    },
  };
}

function readOwner(): { pid: number; url: string } | null {
  try {
    return JSON.parse(readFileSync(ownerFile, "utf8")) as { pid: number; url: string };
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
