import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { META } from "@/lib/mcp-gateway/meta-keys";

export type ToolErrorPolicy = "unknown" | "failed";

// What one upstream call tells Tollgate. The default for anything unclear is `unknown`: a
// timeout is not a failure, and a tool that reports an error may have done the work first
// (a payment API that timed out inside the tool looks exactly like one that refused).
export type UpstreamVerdict =
  | { outcome: "succeeded"; result: CallToolResult }
  | { outcome: "failed"; retryable: boolean; error: { code: string; message: string }; result?: CallToolResult }
  | { outcome: "unknown"; error: { code: string; message: string }; result?: CallToolResult };

export function classifyToolResult(result: CallToolResult, toolErrors: ToolErrorPolicy): UpstreamVerdict {
  if (!result.isError) return { outcome: "succeeded", result };
  const error = { code: "tool-error", message: textOf(result) };
  const verdict = result._meta?.[META.outcome];
  if (verdict === "failed") return { outcome: "failed", retryable: false, error, result };
  if (verdict === "retryable") return { outcome: "failed", retryable: true, error, result };
  if (verdict === "unknown" || toolErrors === "unknown") return { outcome: "unknown", error, result };
  return { outcome: "failed", retryable: false, error, result };
}

// A JSON-RPC error is "nothing happened" only when the server refused the request itself (no such
// method or tool, arguments it would not take); a timeout, a closed connection or an internal
// error may come after the tool acted.
export function classifyCallError(error: unknown): UpstreamVerdict {
  if (error instanceof McpError && (error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound)) {
    return { outcome: "failed", retryable: false, error: { code: `mcp-${-error.code}`, message: error.message.slice(0, 4000) } };
  }
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return { outcome: "unknown", error: { code: "upstream-timeout", message: error.message.slice(0, 4000) } };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { outcome: "unknown", error: { code: error instanceof McpError ? `mcp-${-error.code}` : "upstream-error", message: message.slice(0, 4000) } };
}

export function textOf(result: CallToolResult): string {
  const texts = result.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
  return (texts.join("\n") || "the tool reported an error").slice(0, 4000);
}
