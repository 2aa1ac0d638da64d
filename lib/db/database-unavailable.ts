import { ProblemError } from "@/lib/http/problem";

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
  ECONNRESET: "the connection to the database was reset",
  EPIPE: "the connection to the database broke",
  ETIMEDOUT: "the connection to the database timed out",
};

// pg's own connection errors carry no code, only these messages (pg/lib/client.js).
const PG_MESSAGES: Record<string, { stored: boolean; why: string }> = {
  "Connection terminated unexpectedly": { stored: false, why: "the connection to the database closed" },
  "Connection terminated": { stored: false, why: "the connection to the database was closed by the server's shutdown" },
  "Connection terminated due to connection timeout": { stored: true, why: "the database did not accept a connection in time" },
  "Client has encountered a connection error and is not queryable": { stored: true, why: "the connection to the database had broken" },
  "Client was closed and is not queryable": { stored: true, why: "the server is shutting down" },
};

export function databaseUnavailable(error: unknown): ProblemError | null {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  const code = typeof e?.code === "string" ? e.code : "";
  const known = !code && typeof e?.message === "string" ? PG_MESSAGES[e.message] : undefined;
  const stored = NOTHING_STORED[code] ?? (known?.stored ? known.why : undefined);
  const doubt = IN_DOUBT[code] ?? (code.startsWith("08") ? "the connection to the database failed" : known && !known.stored ? known.why : undefined);
  if (!stored && !doubt) return null;
  const detail = stored
    ? `The database could not serve this request (${stored}); nothing was stored. Retry it.`
    : `The database could not confirm this request (${doubt}); it may or may not have been recorded. Repeat the same request: ` +
      "a repeat is answered from what was stored (a claim that was recorded meets its own lease: 409 until the lease expires).";
  const problem = new ProblemError("service-unavailable", detail, { headers: { "retry-after": "1" } });
  problem.cause = error;
  return problem;
}
