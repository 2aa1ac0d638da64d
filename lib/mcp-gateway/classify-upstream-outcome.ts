import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { UNREACHABLE_CODES } from "@/lib/http/unreachable-codes";
import { META } from "@/lib/mcp-gateway/meta-keys";

// What one upstream call tells Tollgate. The default for anything unclear is `unknown`: a
// timeout is not a failure, and a tool that reports an error may have done the work first
// (a payment API that timed out inside the tool looks exactly like one that refused).
export type UpstreamVerdict =
  | { outcome: "succeeded"; result: CallToolResult }
  | { outcome: "failed"; retryable: boolean; error: { code: string; message: string }; result?: CallToolResult }
  | { outcome: "unknown"; error: { code: string; message: string }; result?: CallToolResult };

// The upstream was gone before the call was sent: nothing can have happened.
export class NotSentError extends Error {}

// A tool's isError result is `unknown` unless the tool itself says what it means in
// `_meta["io.tollgate/outcome"]`: the SDK's own servers report an exception thrown after the
// provider call and a refusal before it alike.
export function classifyToolResult(result: CallToolResult): UpstreamVerdict {
  if (!result.isError) return { outcome: "succeeded", result };
  const error = { code: "tool-error", message: textOf(result) };
  const verdict = result._meta?.[META.outcome];
  if (verdict === "failed") return { outcome: "failed", retryable: false, error, result };
  if (verdict === "retryable") return { outcome: "failed", retryable: true, error, result };
  return { outcome: "unknown", error, result };
}

// A remote upstream that could not be reached (no connection, no route, no such host, a TLS
// certificate refused) or that turned the request away before its MCP layer read it (a session it
// no longer knows, a temporary redirect of the POST, 401/403, a request its transport refused)
// never saw the call. Not 301/302/303: a 303 to a POST usually means "done, see there".
const NOT_RECEIVED_STATUSES = new Set([307, 308, 400, 401, 403, 404, 405, 406, 413, 415]);
const NOT_CONNECTED_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

function neverReceived(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return NOT_RECEIVED_STATUSES.has(error.code ?? 0);
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    const { code, syscall } = cause as { code?: unknown; syscall?: unknown };
    if (NOT_CONNECTED_CODES.has(String(code))) return true;
    // Proof that nothing was sent only on connect (review, 2026-12-02): see UNREACHABLE_CODES.
    if (UNREACHABLE_CODES.has(String(code))) return syscall === "connect";
  }
  return false;
}

// The remote upstream no longer knows the gateway's session (it restarted): every later call
// would fail the same way, so the gateway stops and the host starts it again.
export function sessionLost(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

// Only "no such method" proves the tool did not run. Not InvalidParams: the SDK's server also
// raises it when a tool's result fails validation, after the tool acted. A timeout, a closed
// connection or an internal error may come after the tool acted too.
export function classifyCallError(error: unknown): UpstreamVerdict {
  const message = (error instanceof Error ? error.message : String(error)).slice(0, 4000);
  if (error instanceof NotSentError) return { outcome: "failed", retryable: true, error: { code: "upstream-gone", message } };
  if (neverReceived(error)) return { outcome: "failed", retryable: true, error: { code: "upstream-unreachable", message } };
  if (error instanceof McpError && error.code === ErrorCode.MethodNotFound) return { outcome: "failed", retryable: false, error: { code: "mcp-32601", message } };
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return { outcome: "unknown", error: { code: "upstream-timeout", message } };
  return { outcome: "unknown", error: { code: error instanceof McpError ? `mcp${error.code}` : "upstream-error", message } };
}

function textOf(result: CallToolResult): string {
  const texts = result.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
  return (texts.join("\n") || "the tool reported an error").slice(0, 4000);
}
