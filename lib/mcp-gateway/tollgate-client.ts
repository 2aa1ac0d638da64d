// The gateway's side of the wire contract (AGENT-API.md): claim, heartbeat and complete over
// HTTP with the agent key. Answers come back as they are; what they mean is decided by the
// callers, so this file holds no protocol logic, only transport (timeouts, JSON).
export type TollgateReply = { status: number; headers: Headers; body: Record<string, unknown> };

export type TollgateClient = {
  claim: (input: { idempotencyKey: string; tool: string; args: unknown; workflowId?: string; traceId?: string }) => Promise<TollgateReply>;
  heartbeat: (operationId: string, fencingToken: string, timeoutMs?: number) => Promise<TollgateReply>;
  complete: (operationId: string, body: Record<string, unknown>) => Promise<TollgateReply>;
};

export function createTollgateClient(options: { baseUrl: string; apiKey: string; requestTimeoutMs: number }): TollgateClient {
  const base = options.baseUrl.replace(/\/+$/, "");

  async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}, timeoutMs = options.requestTimeoutMs): Promise<TollgateReply> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.apiKey}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = { detail: text.slice(0, 200) };
    }
    const record = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    return { status: res.status, headers: res.headers, body: record };
  }

  return {
    claim: ({ idempotencyKey, tool, args, workflowId, traceId }) =>
      send("POST", "/api/v1/operations", { tool, args, ...(workflowId ? { workflowId } : {}), ...(traceId ? { traceId } : {}) }, { "idempotency-key": idempotencyKey }),
    heartbeat: (operationId, fencingToken, timeoutMs) => send("POST", `/api/v1/operations/${encodeURIComponent(operationId)}/heartbeat`, { fencingToken }, {}, timeoutMs),
    complete: (operationId, body) => send("POST", `/api/v1/operations/${encodeURIComponent(operationId)}/complete`, body),
  };
}
