import { ProblemError } from "@/lib/http/problem";

// The database could not serve a request (not: the request was wrong). Such a failure is a 503
// with Retry-After, and its text says what the client needs to know to retry safely: whether
// the statement can have taken effect. PostgreSQL's SQLSTATEs, postgres.js's and Node's codes.

// The statement was refused or rolled back, or never reached PostgreSQL: nothing was stored.
const NOTHING_STORED: Record<string, string> = {
  "55P03": "a row it needs stayed locked longer than the lock timeout",
  "57014": "the statement took longer than the statement timeout",
  "40001": "a concurrent change conflicted with it",
  "40P01": "a concurrent change deadlocked with it",
  "53300": "the database has no connection slot free",
  "57P03": "the database is starting or stopping",
  CONNECT_TIMEOUT: "the database did not accept a connection in time",
  ECONNREFUSED: "the database refused the connection",
  CONNECTION_ENDED: "the server is shutting down",
};

// The connection broke while the statement may have been running: it may have committed.
const IN_DOUBT: Record<string, string> = {
  "57P01": "the database was shut down",
  "57P02": "the database crashed",
  CONNECTION_CLOSED: "the connection to the database closed",
  CONNECTION_DESTROYED: "the connection to the database was closed by the server's shutdown",
  ECONNRESET: "the connection to the database was reset",
  EPIPE: "the connection to the database broke",
  ETIMEDOUT: "the connection to the database timed out",
};

export function databaseUnavailable(error: unknown): ProblemError | null {
  const code = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "";
  const stored = NOTHING_STORED[code];
  const doubt = IN_DOUBT[code] ?? (code.startsWith("08") ? "the connection to the database failed" : undefined);
  if (!stored && !doubt) return null;
  const detail = stored
    ? `The database could not serve this request (${stored}); nothing was stored. Retry it.`
    : `The database could not confirm this request (${doubt}); it may or may not have been recorded. Repeat the same request: a repeat is answered from what was stored.`;
  const problem = new ProblemError("service-unavailable", detail, { headers: { "retry-after": "1" } });
  problem.cause = error;
  return problem;
}
