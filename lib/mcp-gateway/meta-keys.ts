// `_meta` keys the gateway reads and writes (MCP reserves the prefix-less names; a reverse-DNS
// prefix keeps ours apart from every other extension's).
export const META = {
  // Set by an agent host that derives keys itself (a workflow step id): wins over the argument.
  idempotencyKey: "io.tollgate/idempotency-key",
  workflowId: "io.tollgate/workflow-id",
  traceId: "io.tollgate/trace-id",
  // Sent to the upstream tool with every call, so a tool that calls a deduplicating provider
  // can pass the operation's downstream key on (what `takeover: deduplicated` relies on).
  downstreamKey: "io.tollgate/downstream-key",
  operation: "io.tollgate/operation",
  // An upstream tool's own verdict on an isError result: "failed" (nothing happened),
  // "retryable" (nothing happened, try again later) or "unknown".
  outcome: "io.tollgate/outcome",
} as const;

// The argument the gateway adds to every guarded tool's input schema (unless the tool has one).
export const KEY_ARGUMENT = "idempotencyKey";
