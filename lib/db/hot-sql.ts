import pg from "pg";
import type { Db } from "@/lib/db";
import { metrics } from "@/lib/metrics/registry";
import { log } from "@/lib/log";
import { databaseNotReached, databaseUnavailable } from "@/lib/db/database-unavailable";

// The protocol's hot path (claim, heartbeat, complete, webhook ingest; replays are claims) sends
// its one SQL statement on a connection of its own in pg's PIPELINE mode: every statement is
// written at once, without waiting for the answers to the ones before, and PostgreSQL runs them in
// order and answers them in order. With a pool each concurrent request had its own connection,
// write, read and wake-up, and on a 2-vCPU VM those cost the server more than the SQL did
// (bench/README.md, "Pipelining the hot path"). Each statement is still its own
// Parse/Bind/Execute/Sync, so its own implicit transaction, and pg answers it at ReadyForQuery,
// after its COMMIT: an error at commit (a deferred trigger, NOTIFY's lock) is reported, never a
// success that did not last. Everything else (console, CLI, worker) goes through Prisma.
//
// One connection runs statements in order, so a statement that waits for a row lock holds up
// those behind it. Every transaction that locks an operation row is short, and the timeouts
// below bound the worst case: a lock wait over HOT_LOCK_TIMEOUT_MS is cancelled (rolled back,
// nothing stored) and answered 503 with Retry-After, instead of stalling the instance.

export type HotStatement = { name: string; text: string };

export const HOT_LOCK_TIMEOUT_MS = 2_000;
export const HOT_STATEMENT_TIMEOUT_MS = 10_000;
export const HOT_CONNECT_TIMEOUT_MS = 5_000;
// A connection that stays silent this long while statements wait for their answers is taken for
// dead (a database host that froze, a failover that moved its address, a NAT that forgot the
// connection): nothing else would ever fail them, as statement_timeout runs on the server. A live
// server answers a statement at least every statement_timeout, so this margin is never reached.
export const HOT_STALL_MARGIN_MS = 5_000;
export const HOT_APPLICATION_NAME = "tollgate-hot";

export type HotSql = { query<T>(statement: HotStatement, values: unknown[]): Promise<T[]>; end(): Promise<void> };

export function createHotSql(
  connectionString: string,
  options: { connections: number; lockTimeoutMs?: number; statementTimeoutMs?: number; connectTimeoutMs?: number; stallAfterMs?: number },
): HotSql {
  const statementTimeout = options.statementTimeoutMs ?? HOT_STATEMENT_TIMEOUT_MS;
  const config: pg.ClientConfig = {
    connectionString,
    application_name: HOT_APPLICATION_NAME,
    lock_timeout: options.lockTimeoutMs ?? HOT_LOCK_TIMEOUT_MS,
    statement_timeout: statementTimeout,
    connectionTimeoutMillis: options.connectTimeoutMs ?? HOT_CONNECT_TIMEOUT_MS,
    // An idle connection whose peer vanished is found out before a statement waits on it.
    keepAlive: true,
  };
  const stallAfterMs = options.stallAfterMs ?? statementTimeout + HOT_STALL_MARGIN_MS;
  const connections = Array.from({ length: options.connections }, () => pipelinedConnection(config, stallAfterMs));
  let next = 0;
  return {
    query: <T>(statement: HotStatement, values: unknown[]) => connections[next++ % connections.length]!.query<T>(statement, values),
    end: async () => void (await Promise.all(connections.map((c) => c.end()))),
  };
}

type Socket = { cork(): void; uncork(): void; destroy(): void; on(event: "data", listener: () => void): void };
const socketOf = (c: pg.Client) => (c as unknown as { connection: { stream: Socket } }).connection.stream;

// One pg Client in pipeline mode, opened on first use and opened again after it breaks (the
// database restarted, the backend was ended): a broken client errors every statement it holds
// and is dropped; the next statement opens a new one. A failed open is that statement's error,
// and says nothing was stored (the statement never left the process).
function pipelinedConnection(config: pg.ClientConfig, stallAfterMs: number): HotSql {
  let client: pg.Client | undefined;
  let opening: Promise<pg.Client> | undefined;
  let ended = false;
  const drop = (c: pg.Client) => {
    if (client === c) client = undefined;
  };
  const open = async (): Promise<pg.Client> => {
    const c = new pg.Client({ ...config, pipeline: true } as pg.ClientConfig);
    // Without a listener a broken connection's 'error' would end the process. Its socket is
    // closed too: on a protocol error pg leaves it open, with the backend and what it runs.
    c.on("error", (error: Error & { code?: string }) => {
      drop(c);
      socketOf(c).destroy();
      log().warn({ err: { message: error.message, code: error.code } }, "hot-path database connection lost");
    });
    c.on("end", () => drop(c));
    await c.connect().catch(async (error: unknown) => {
      await c.end().catch(() => undefined);
      throw error;
    });
    socketOf(c).on("data", () => (quietSince = Date.now()));
    client = c;
    return c;
  };
  // Statements written and not yet answered, and since when the connection has said nothing while
  // some were. One timer per connection, armed while statements wait (see HOT_STALL_MARGIN_MS):
  // a connection silent past stallAfterMs is closed, and pg fails every statement it holds ("may
  // or may not have been recorded", a 503) instead of leaving them, and all behind them, waiting.
  let outstanding = 0;
  let quietSince = 0;
  let watchdog: NodeJS.Timeout | undefined;
  const check = () => {
    watchdog = undefined;
    const c = client;
    if (!c || outstanding === 0) return;
    const silent = Date.now() - quietSince;
    if (silent < stallAfterMs) {
      watchdog = setTimeout(check, stallAfterMs - silent).unref();
      return;
    }
    drop(c);
    socketOf(c).destroy();
    log().warn({ silentMs: silent, outstanding }, "hot-path database connection silent while statements waited: closed");
  };
  const ready = (): Promise<pg.Client> => {
    opening ??= open().finally(() => (opening = undefined));
    return opening;
  };
  // pg writes each statement as soon as it is queried (its own cork/uncork). Corking the socket
  // until the event loop's check phase puts every statement queried in this turn into one write:
  // one system call for a batch instead of one per request, which is most of what pipelining saves
  // (`npm run bench -- paired`: completes 0.53× of liveness with a write each, 0.66× corked).
  let corked: pg.Client | undefined;
  const corkUntilLater = (c: pg.Client) => {
    if (corked === c) return;
    corked = c;
    const stream = socketOf(c);
    stream.cork();
    setImmediate(() => {
      if (corked === c) corked = undefined;
      stream.uncork();
    });
  };
  return {
    async query<T>(statement: HotStatement, values: unknown[]): Promise<T[]> {
      if (ended) throw databaseNotReached(new Error("Client was closed and is not queryable"));
      let c: pg.Client;
      try {
        c = client ?? (await ready());
      } catch (error) {
        throw databaseNotReached(error);
      }
      corkUntilLater(c);
      if (outstanding++ === 0) quietSince = Date.now();
      watchdog ??= setTimeout(check, stallAfterMs).unref();
      try {
        return (await c.query<T & pg.QueryResultRow>({ name: statement.name, text: statement.text, values })).rows;
      } catch (error) {
        // A FATAL error (the backend was ended, the server shuts down) comes before the socket
        // closes, and pg keeps the client queryable until it does: a statement sent in between
        // would be lost with it, a 503 for a request that never reached a live backend.
        if (endsTheSession(error)) {
          drop(c);
          socketOf(c).destroy();
        }
        throw error;
      } finally {
        outstanding--;
      }
    },
    async end() {
      ended = true;
      const c = client ?? (await opening?.catch(() => undefined));
      client = undefined;
      if (watchdog) clearTimeout(watchdog);
      // pg's end() waits for the statements it holds: on a silent connection, forever.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, HOT_CONNECT_TIMEOUT_MS)));
      await Promise.race([c?.end(), late.then(() => c && socketOf(c).destroy())]);
      clearTimeout(timer);
    },
  };
}

// By severity, and by the codes of a session the server ends (57P01 admin shutdown, 57P02 crash
// shutdown, 57P03 cannot connect now, 57P05 idle session timeout): `severity` is localized under a
// non-English lc_messages.
const endsTheSession = (error: unknown): boolean => {
  const { severity, code } = (error ?? {}) as { severity?: unknown; code?: unknown };
  return severity === "FATAL" || severity === "PANIC" || (typeof code === "string" && /^57P0[1235]$/.test(code));
};

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
    return await sql.query<T>(statement, values);
  } catch (error) {
    throw databaseUnavailable(error) ?? error;
  }
}
