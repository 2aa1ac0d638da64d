import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { META } from "@/lib/mcp-gateway/meta-keys";

// A claim Tollgate did not grant, in words a model acts on correctly: whether to wait and
// repeat the same call, to stop, or to use a new key. The upstream tool was not called.
export function refusalResult(reply: { status: number; headers: Headers; body: Record<string, unknown> }): CallToolResult {
  const code = typeof reply.body.code === "string" ? reply.body.code : `http-${reply.status}`;
  const detail = typeof reply.body.detail === "string" ? reply.body.detail : "";
  const retryAfter = reply.headers.get("retry-after");
  const operationId = typeof reply.body.operationId === "string" ? reply.body.operationId : undefined;
  const text = advice(reply.status, code, reply.body, retryAfter) + (detail ? ` (Tollgate: ${detail})` : "");
  return {
    content: [{ type: "text", text }],
    isError: true,
    _meta: { [META.operation]: { status: reply.status, code, ...(operationId ? { operationId } : {}), ...(retryAfter ? { retryAfterSeconds: Number(retryAfter) } : {}) } },
  };
}

function advice(status: number, code: string, body: Record<string, unknown>, retryAfter: string | null): string {
  const wait = retryAfter ? ` in ${retryAfter} s` : " later";
  if (status === 202) {
    const approval = body.approval as { id?: string; expiresAt?: string } | undefined;
    return `This action needs a person's approval first (approval ${approval?.id ?? "?"}, open until ${approval?.expiresAt ?? "?"}). Nothing was done yet. Repeat the same call with the same idempotency key${wait} to carry it out once approved.`;
  }
  switch (code) {
    case "operation-in-progress":
      return `This action is being carried out by another attempt right now. Do not start a new action: repeat the same call with the same idempotency key${wait}.`;
    case "outcome-unknown":
      return "The outcome of this action is unknown: it may have happened. Do not retry it, with this key or a new one; an operator will reconcile it.";
    case "retry-backoff":
      return `An earlier attempt of this action failed and may be retried${wait}. Repeat the same call with the same idempotency key then.`;
    case "idempotency-key-reused": {
      const paths = Array.isArray(body.mismatch) ? body.mismatch.join(", ") : "";
      // Review, 2026-12-02: "a different action needs a new key" read, to a model retrying after a
      // timeout with reworded arguments, as leave to mint a key, and the action ran twice. The
      // arguments differing is a conflict to resolve, not a new intent.
      return `This idempotency key was already used for this tool with different arguments${paths ? ` (${paths})` : ""}: the action under this key already ran or may have run. Nothing was done now. If you are retrying that action, repeat it with exactly its original arguments and the same key; do not use a new key for it. Only a genuinely new, separate action gets a new key.`;
    }
    case "approval-rejected":
      return "A person rejected this action. Nothing was done; do not retry it.";
    case "tool-not-found":
      return "This tool is not registered in Tollgate, so the gateway will not call it. Nothing was done; an administrator must define it first.";
    case "service-unavailable":
      // The claim may or may not have been recorded; either way the tool was not called, and a
      // repeat under the same key is answered from what was stored (a new key could act twice).
      return `Tollgate could not answer just now, so the tool was not called. Repeat the same call with the same idempotency key${wait}; do not use a new key for it.`;
    case "idempotency-key-invalid":
      return "The idempotency key must be 1 to 255 printable ASCII characters without spaces. Nothing was done.";
    default:
      return `Tollgate refused this call (${status} ${code}). Nothing was done.`;
  }
}

export function gatewayErrorResult(text: string, extra: Record<string, unknown> = {}): CallToolResult {
  return { content: [{ type: "text", text }], isError: true, _meta: { [META.operation]: extra } };
}
