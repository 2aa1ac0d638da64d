import type { LogFields } from "@/lib/http/request-context";
import type { OperationView, Replay } from "@/lib/operations/operation-schemas";

// What the SQL functions return for an operation (tollgate_op_view), timestamps as PostgreSQL prints them.
export type SqlOperation = {
  operationId: string;
  tool: string;
  state: OperationView["state"];
  attempts: number;
  leaseExpiresAt: string | null;
  notBefore: string | null;
  downstreamKey: string;
  result: OperationView["result"];
  error: OperationView["error"];
  resultExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  resolution: (Omit<NonNullable<OperationView["resolution"]>, "at"> & { at: string }) | null;
  workflowId: string | null;
  principal: string;
  // The first 16 hex characters of the key's SHA-256, as logs and the console show it.
  keyDigest: string;
};

// What a request's log line says of the operation it touched, whatever the answer: `attempt` is
// the operation's latest attempt (the reporter's own, unless a newer one superseded it).
export function operationLogFields(op: SqlOperation): LogFields {
  return { operationId: op.operationId, tool: op.tool, attempt: op.attempts, workflowId: op.workflowId ?? undefined, keyDigest: op.keyDigest };
}

// PostgreSQL prints a timestamptz in a UTC session as "2026-11-30T03:26:07.769231+00:00"
// (fraction trimmed of trailing zeros, or absent). Those are rewritten as text, exactly as
// toISOString() would print them (milliseconds truncated): parsing a Date costs ten times
// more, and every hot-path answer carries up to five timestamps. Anything else is parsed.
const utcTimestamp = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00:00$/;

export function iso(value: string): string;
export function iso(value: string | null): string | null;
export function iso(value: string | null): string | null {
  if (value === null) return null;
  const utc = utcTimestamp.exec(value);
  if (utc) return `${utc[1]}.${(utc[2] ?? "").padEnd(3, "0").slice(0, 3)}Z`;
  return new Date(value).toISOString();
}

export function operationView(op: SqlOperation): OperationView {
  return {
    operationId: op.operationId,
    tool: op.tool,
    state: op.state,
    attempts: op.attempts,
    leaseExpiresAt: iso(op.leaseExpiresAt),
    notBefore: iso(op.notBefore),
    downstreamKey: op.downstreamKey,
    result: op.result,
    error: op.error,
    resultExpiresAt: iso(op.resultExpiresAt),
    createdAt: iso(op.createdAt),
    updatedAt: iso(op.updatedAt),
    resolution: op.resolution ? { ...op.resolution, at: iso(op.resolution.at) } : null,
  };
}

// The replay body. Built only from columns that never change once the operation is
// terminal, with a fixed key order, so every replay is byte-for-byte the same.
export function replayText(op: SqlOperation): string {
  const replay: Replay = {
    operationId: op.operationId,
    state: op.state as Replay["state"],
    tool: op.tool,
    result: op.result,
    error: op.error,
    resultExpiresAt: iso(op.resultExpiresAt ?? new Date(0).toISOString()),
  };
  return JSON.stringify(replay);
}
