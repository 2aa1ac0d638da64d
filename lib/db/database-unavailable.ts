import { ProblemError } from "@/lib/http/problem";
import { UNREACHABLE_CODES } from "@/lib/http/unreachable-codes";

// The database could not serve a request (not: the request was wrong). Such a failure is a 503
// with Retry-After, and its text says what the client needs to know to retry safely: whether
// the statement can have taken effect. PostgreSQL's SQLSTATEs and Node's socket codes.

// The statement was refused or rolled back, or never reached PostgreSQL: nothing was stored.
const NOTHING_STORED: Record<string, string> = {
  "55P03": "a row it needs stayed locked longer than the lock timeout",
  "57014": "the statement took longer than the statement timeout",
  "40001": "a concurrent change conflicted with it",
  "40P01": "a concurrent change deadlocked with it",
  "53100": "the database's disk is full",
  "53200": "the database is out of memory",
  "53300": "the database has no connection slot free",
  "57P03": "the database is starting or stopping",
  "25006": "the database is read-only (a standby, or during a failover)",
  ECONNREFUSED: "the database refused the connection",
  ENOTFOUND: "the database's host name did not resolve",
  EAI_AGAIN: "the database's host name did not resolve",
  EHOSTUNREACH: "the database's host is unreachable",
  ENETUNREACH: "the database's network is unreachable",
};

// The connection broke while the statement may have been running: it may have committed.
const IN_DOUBT: Record<string, string> = {
  "57P01": "the database was shut down",
  "57P02": "the database crashed",
  "57P04": "the database was dropped",
  "57P05": "the database ended a connection idle past its idle-session timeout",
  ECONNRESET: "the connection to the database was reset",
  EPIPE: "the connection to the database broke",
  ETIMEDOUT: "the connection to the database timed out",
};

// pg's own connection errors carry no code, only these messages (pg/lib/client.js).
const PG_MESSAGES: Record<string, { nothingStored: boolean; why: string }> = {
  "Connection terminated unexpectedly": { nothingStored: false, why: "the connection to the database closed" },
  "Connection terminated": { nothingStored: false, why: "the connection to the database was closed by the server's shutdown" },
  "Connection terminated due to connection timeout": { nothingStored: true, why: "the database did not accept a connection in time" },
  "Client has encountered a connection error and is not queryable": { nothingStored: true, why: "the connection to the database had broken" },
  "Client was closed and is not queryable": { nothingStored: true, why: "the server is shutting down" },
  // pg-pool's: no connection could be had within connectionTimeoutMillis.
  "timeout exceeded when trying to connect": { nothingStored: true, why: "no database connection could be had in time" },
};

// The hot path's requests are all safe to repeat as they are: the protocol answers a repeat from what was stored.
const REPEAT_THE_SAME_REQUEST =
  "Repeat the same request: a repeat is answered from what was stored (a claim that was recorded meets its own lease: 409 until the lease expires).";

type Classified = { nothingStored: boolean; why: string };

function classify(code: string, message: unknown, syscall?: unknown): Classified | undefined {
  if (UNREACHABLE_CODES.has(code) && syscall !== undefined && syscall !== "connect") {
    return { nothingStored: false, why: "the database's host became unreachable" };
  }
  if (NOTHING_STORED[code]) return { nothingStored: true, why: NOTHING_STORED[code] };
  if (IN_DOUBT[code]) return { nothingStored: false, why: IN_DOUBT[code] };
  // 08P01 (protocol violation) is also what a statement sent with the wrong number of parameters gets: a bug, not an outage.
  if (code.startsWith("08") && code !== "08P01") return { nothingStored: false, why: "the connection to the database failed" };
  return !code && typeof message === "string" ? PG_MESSAGES[message] : undefined;
}

function serviceUnavailable({ nothingStored, why }: Classified, inDoubt: string, cause: unknown): ProblemError {
  const detail = nothingStored
    ? `The database could not serve this request (${why}); nothing was stored. Retry it.`
    : `The database could not confirm this request (${why}); it may or may not have been recorded. ${inDoubt}`;
  const problem = new ProblemError("service-unavailable", detail, { headers: { "retry-after": "1" } });
  problem.cause = cause;
  return problem;
}

// A hot-path statement's error (pg's, as it is).
export function databaseUnavailable(error: unknown): ProblemError | null {
  const e = error as { code?: unknown; message?: unknown; syscall?: unknown } | null | undefined;
  const classified = classify(typeof e?.code === "string" ? e.code : "", e?.message, e?.syscall);
  return classified ? serviceUnavailable(classified, REPEAT_THE_SAME_REQUEST, error) : null;
}

// A hot-path connection that could not be opened: the statement never left the process, whatever
// the error says ("Connection terminated unexpectedly" during start-up, pg's bare "timeout
// expired" for a server that accepts and never answers).
export function databaseNotReached(error: unknown): ProblemError {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  const known = classify(typeof e?.code === "string" ? e.code : "", e?.message);
  const why = known?.nothingStored ? known.why : "no connection to the database could be opened";
  return serviceUnavailable({ nothingStored: true, why }, REPEAT_THE_SAME_REQUEST, error);
}

// The driver adapter's names for the socket errors it maps (@prisma/adapter-pg, mapSocketError).
const ADAPTER_KINDS: Record<string, Classified> = {
  DatabaseNotReachable: { nothingStored: true, why: "the database's server could not be reached" },
  ConnectionClosed: { nothingStored: false, why: "the connection to the database was reset" },
  SocketTimeout: { nothingStored: false, why: "the connection to the database timed out" },
};

// Prisma's own codes for a database it cannot use (as seen with the pg adapter).
const PRISMA_CODES: Record<string, Classified> = {
  P1001: ADAPTER_KINDS.DatabaseNotReachable!,
  P1017: { nothingStored: false, why: "the database closed the connection" },
  P2034: { nothingStored: true, why: "a concurrent change conflicted or deadlocked with it" },
  P2037: { nothingStored: true, why: "the database has no connection slot free" },
};

// What a change through Prisma should do when in doubt differs by route: look first.
const LOOK_BEFORE_REPEATING = "Read what is stored before repeating a change (a read is always safe to repeat).";

type PrismaLike = Error & { code?: unknown; clientVersion?: unknown; cause?: unknown; meta?: { driverAdapterError?: { cause?: Record<string, unknown> } } };

// The same for an error that reached a route through Prisma (console and admin routes):
// - Prisma's own error: the driver adapter's mapping of pg's error (the SQLSTATE as originalCode,
//   or a kind for a socket error) in meta, else Prisma's code, which for a socket error the
//   adapter does not map is the socket's code (EHOSTUNREACH…);
// - the adapter's DriverAdapterError as it is (a failed BEGIN or COMMIT of a $transaction);
// - pg's code-less connection errors, passed through as they are (their texts are pg's own).
// Nothing else is looked at: an MCP tool's or a provider's ECONNREFUSED is not the database being down.
export function prismaDatabaseUnavailable(error: unknown): ProblemError | null {
  if (!(error instanceof Error)) return null;
  const e = error as PrismaLike;
  const fromPrisma = typeof e.clientVersion === "string";
  const adapter =
    e.meta?.driverAdapterError?.cause ?? (e.name === "DriverAdapterError" && typeof e.cause === "object" && e.cause ? (e.cause as Record<string, unknown>) : undefined);
  const prismaCode = fromPrisma && typeof e.code === "string" ? e.code : "";
  // Prisma's message starts with the call site; its last line is the database's own words.
  let message = e.message.split("\n").filter(Boolean).at(-1) ?? "";
  let code: string | undefined = prismaCode || undefined;
  let classified: Classified | undefined;
  if (adapter) {
    const kind = String(adapter.kind);
    if (typeof adapter.originalMessage === "string") message = adapter.originalMessage;
    if (typeof adapter.originalCode === "string") {
      code = adapter.originalCode;
      classified = classify(code, message);
    } else if (ADAPTER_KINDS[kind]) {
      code = kind;
      classified = ADAPTER_KINDS[kind];
    }
  }
  if (!classified && !adapter) {
    if (/^P\d{4}$/.test(prismaCode)) classified = PRISMA_CODES[prismaCode];
    else if (fromPrisma || typeof e.code !== "string") classified = classify(prismaCode, e.message);
  }
  return classified ? serviceUnavailable(classified, LOOK_BEFORE_REPEATING, { code, message }) : null;
}
