import postgres from "postgres";
import { parse as parseConnectionString } from "pg-connection-string";
import type { Db } from "@/lib/db";
import { metrics } from "@/lib/metrics/registry";
import { log } from "@/lib/log";
import { databaseUnavailable } from "@/lib/db/database-unavailable";

// The protocol's hot path (claim, heartbeat, complete, webhook ingest; replays are claims) sends
// its one SQL statement on a connection of its own that PIPELINES: postgres.js writes every
// statement queued in the same turn of the event loop in one socket write, PostgreSQL runs them
// one after another, and their answers come back in as few reads. With a pg pool each
// concurrent request had its own connection, its own write and its own read, and on a 2-vCPU VM
// those system calls and wake-ups cost the server more than the SQL: `npm run bench -- paired`
// measured claims 0.63× → 0.71× the liveness route at c=16, completes 0.58× → 0.66×, replays
// 0.66× → 0.75× (bench/README.md, "Pipelining the hot path"). Each statement is still its own implicit
// transaction (Parse/Bind/Execute/Sync per query), so an error in one never touches another.
// Everything else (console, CLI, worker) goes through Prisma.
//
// One connection runs statements in order, so a statement that waits for a row lock holds up
// those behind it. Every transaction that locks an operation row is short, and the timeouts
// below bound the worst case: a lock wait over HOT_LOCK_TIMEOUT_MS is cancelled (rolled back,
// nothing stored) and answered 503 with Retry-After, instead of stalling the instance.

export type HotStatement = { name: string; text: string };
type HotTypes = { jsonText: postgres.PostgresType };
export type HotSql = postgres.Sql<HotTypes>;

export const HOT_LOCK_TIMEOUT_MS = 2_000;
export const HOT_STATEMENT_TIMEOUT_MS = 10_000;
export const HOT_APPLICATION_NAME = "tollgate-hot";

export function createHotSql(
  connectionString: string,
  options: { connections: number; lockTimeoutMs?: number; statementTimeoutMs?: number },
): HotSql {
  // pg's own parser reads DATABASE_URL, so both drivers reach the same server the same way
  // (postgres.js would send any query parameter it does not know, e.g. ?schema=, as a setting
  // PostgreSQL refuses).
  const c = parseConnectionString(connectionString);
  const settings: postgres.Options<HotTypes> = {
    host: c.host ?? undefined,
    port: c.port ? Number(c.port) : undefined,
    database: c.database ?? undefined,
    user: c.user,
    pass: c.password,
    ssl: tlsOf(c.ssl),
    max: options.connections,
    prepare: true,
    types: {
      // The hot path hands json/jsonb parameters over as JSON text (canonical args, the payload
      // exactly as signed), as pg takes them; postgres.js would JSON.stringify that text again.
      jsonText: {
        to: 3802,
        from: [114, 3802],
        serialize: (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value)),
        parse: (text: string) => JSON.parse(text) as unknown,
      },
    },
    connection: {
      application_name: HOT_APPLICATION_NAME,
      lock_timeout: options.lockTimeoutMs ?? HOT_LOCK_TIMEOUT_MS,
      statement_timeout: options.statementTimeoutMs ?? HOT_STATEMENT_TIMEOUT_MS,
      ...(c.options ? { options: c.options } : {}),
    },
    // The hot functions raise no notices; one would be news, not noise on stdout.
    onnotice: (notice) => log().warn({ notice: { code: notice.code, message: notice.message } }, "database notice on the hot path"),
  };
  return postgres<HotTypes>(settings);
}

// pg reads sslmode into false, true or tls.connect options; postgres.js takes the same options.
function tlsOf(ssl: ReturnType<typeof parseConnectionString>["ssl"]): postgres.Options<HotTypes>["ssl"] {
  if (!ssl || ssl === "0" || ssl === "false") return false;
  if (typeof ssl === "object") return ssl as postgres.Options<HotTypes>["ssl"];
  return "require";
}

const hotClients = new WeakMap<Db, HotSql>();

// Called by lib/db.ts for the server's client; other clients (CLI, tests, seed) fall back to Prisma.
export function registerHotSql(db: Db, sql: HotSql): void {
  hotClients.set(db, sql);
}

export async function hotQuery<T>(db: Db, statement: HotStatement, values: unknown[]): Promise<T[]> {
  const sql = hotClients.get(db);
  if (!sql) return db.$queryRawUnsafe<T[]>(statement.text, ...values);
  metrics().dbQueries.inc();
  return runHot<T>(sql, statement, values);
}

// A database that cannot answer (lock timeout, lost connection, shutdown) is a 503 saying whether
// the request may have been recorded, never a 500 (lib/db/database-unavailable.ts).
export async function runHot<T>(sql: HotSql, statement: HotStatement, values: unknown[]): Promise<T[]> {
  try {
    return (await sql.unsafe(statement.text, values as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as T[];
  } catch (error) {
    throw databaseUnavailable(error) ?? error;
  }
}
