import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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

// A remote upstream that could not be reached (no connection, no such host) or turned the request
// away at its door (a redirect, 401, 403) never saw the call.
function neverReceived(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) {
    const status = error.code ?? 0;
    return status === 401 || status === 403 || (status >= 300 && status < 400);
  }
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    const code = (cause as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") return true;
  }
  return false;
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

export function textOf(result: CallToolResult): string {
  const texts = result.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
  return (texts.join("\n") || "the tool reported an error").slice(0, 4000);
}
