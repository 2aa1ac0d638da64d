// Where an operation's trace was opened from. The worklists that lead to traces (the reconcile
// queue, the inbox, approvals, the audit log) add ?from=<list> to their links, so the trace's
// breadcrumb and the sidebar lead back to that list; without it (the operations table, a shared
// link) they lead to Operations. The trace from the reconcile queue said "Operations", a list the
// operator had not come from (console review). Only these names are read: anything else is absent.
// No server-only code here: client components build these links too.

export const traceOrigins = {
  reconcile: "Reconcile",
  inbox: "Inbox",
  approvals: "Approvals",
  audit: "Audit log",
} as const;

export type TraceOrigin = keyof typeof traceOrigins;

export function traceOrigin(value: unknown): TraceOrigin | null {
  return typeof value === "string" && Object.hasOwn(traceOrigins, value) ? (value as TraceOrigin) : null;
}

// The trace's address, opened from `from` (or from the operations table when absent).
export function traceHref(tenant: string, operationId: string, from?: TraceOrigin): string {
  const path = `/t/${tenant}/operations/${encodeURIComponent(operationId)}`;
  return from ? `${path}?from=${from}` : path;
}
