import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { compileArgumentCheck } from "@/lib/mcp-gateway/check-arguments";
import { classifyCallError, classifyToolResult, NotSentError, sessionLost } from "@/lib/mcp-gateway/classify-upstream-outcome";
import { guardToolList } from "@/lib/mcp-gateway/guard-tool-list";
import { MAX_STORED_RESULT_BYTES, resultToStore } from "@/lib/mcp-gateway/stored-result";

// What the gateway records for each way an upstream call can end: `failed` only where nothing
// can have happened, `unknown` for everything that might come after the tool acted.
describe("classifying an upstream call", () => {
  it("an isError result is unknown unless the tool says what it means", () => {
    const result = { content: [{ type: "text" as const, text: "provider timed out" }], isError: true };
    expect(classifyToolResult(result)).toMatchObject({ outcome: "unknown", error: { code: "tool-error", message: "provider timed out" } });
    expect(classifyToolResult({ ...result, _meta: { "io.tollgate/outcome": "failed" } })).toMatchObject({ outcome: "failed", retryable: false });
    expect(classifyToolResult({ ...result, _meta: { "io.tollgate/outcome": "retryable" } })).toMatchObject({ outcome: "failed", retryable: true });
    expect(classifyToolResult({ ...result, _meta: { "io.tollgate/outcome": "nonsense" } })).toMatchObject({ outcome: "unknown" });
    expect(classifyToolResult({ content: [] })).toMatchObject({ outcome: "succeeded" });
  });

  it("only a call never sent or a method the server lacks is a failure", () => {
    expect(classifyCallError(new NotSentError("gone"))).toMatchObject({ outcome: "failed", retryable: true, error: { code: "upstream-gone" } });
    expect(classifyCallError(new McpError(ErrorCode.MethodNotFound, "no tools/call"))).toMatchObject({ outcome: "failed", retryable: false });
    // The SDK's server raises InvalidParams for a result that fails validation, after the tool ran.
    expect(classifyCallError(new McpError(ErrorCode.InvalidParams, "Invalid tools/call result"))).toMatchObject({ outcome: "unknown" });
    expect(classifyCallError(new McpError(ErrorCode.RequestTimeout, "timed out"))).toMatchObject({ outcome: "unknown", error: { code: "upstream-timeout" } });
    expect(classifyCallError(new McpError(ErrorCode.ConnectionClosed, "closed"))).toMatchObject({ outcome: "unknown", error: { code: "mcp-32000" } });
    expect(classifyCallError(new Error("boom"))).toMatchObject({ outcome: "unknown", error: { code: "upstream-error" } });
    // A remote upstream that never saw the call: no connection, no such host, turned away at its door.
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(classifyCallError(new TypeError("fetch failed", { cause: refused }))).toMatchObject({ outcome: "failed", retryable: true, error: { code: "upstream-unreachable" } });
    expect(classifyCallError(new StreamableHTTPError(401, "unauthorized"))).toMatchObject({ outcome: "failed", retryable: true });
    // A reset connection or a 500 may come after the tool acted.
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(classifyCallError(new TypeError("fetch failed", { cause: reset }))).toMatchObject({ outcome: "unknown" });
    expect(classifyCallError(new StreamableHTTPError(500, "internal"))).toMatchObject({ outcome: "unknown" });
    // A 303 to a POST usually means "done, see there"; a 404 is a session the server forgot.
    expect(classifyCallError(new StreamableHTTPError(303, "see other"))).toMatchObject({ outcome: "unknown" });
    expect(classifyCallError(new StreamableHTTPError(404, "Session not found"))).toMatchObject({ outcome: "failed", retryable: true });
    expect(sessionLost(new StreamableHTTPError(404, "Session not found"))).toBe(true);
    expect(sessionLost(new StreamableHTTPError(500, "internal"))).toBe(false);
    // Unreachable on connect sent nothing; on an open connection the tool may already have acted.
    for (const code of ["EHOSTUNREACH", "ENETUNREACH"]) {
      const onConnect = Object.assign(new Error(`connect ${code}`), { code, syscall: "connect" });
      expect(classifyCallError(new TypeError("fetch failed", { cause: onConnect }))).toMatchObject({ outcome: "failed", retryable: true });
      const onRead = Object.assign(new Error(`read ${code}`), { code, syscall: "read" });
      expect(classifyCallError(new TypeError("fetch failed", { cause: onRead }))).toMatchObject({ outcome: "unknown" });
      expect(classifyCallError(new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) }))).toMatchObject({ outcome: "unknown" });
    }
    const certificate = Object.assign(new Error("certificate has expired"), { code: "CERT_HAS_EXPIRED" });
    expect(classifyCallError(new TypeError("fetch failed", { cause: certificate }))).toMatchObject({ outcome: "failed", retryable: true });
  });
});

describe("storing a result", () => {
  const big = { content: [{ type: "text" as const, text: "x".repeat(MAX_STORED_RESULT_BYTES) }] };
  it("keeps a result as it is, without the upstream's _meta", () => {
    expect(resultToStore({ content: [{ type: "text", text: "ok" }], _meta: { a: 1 } }, "succeeded")).toEqual({ statusCode: 200, body: { content: [{ type: "text", text: "ok" }] } });
  });
  it("replaces one too large to keep by a note that says how the action ended", () => {
    expect(resultToStore(big, "succeeded").body).toMatchObject({ isError: false, content: [{ text: expect.stringContaining("The action succeeded") }] });
    expect(resultToStore({ ...big, isError: true }, "failed").body).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("failed, and nothing was done") }] });
  });
});

describe("the tool list the agent sees", () => {
  const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] }, ...extra });
  const list = guardToolList({
    upstreamTools: [
      tool("tickets.create", { outputSchema: { type: "object" } }),
      tool("tickets.count", { annotations: { readOnlyHint: true } }),
      tool("Tickets.Shout"),
      tool("tickets.keyed", { inputSchema: { type: "object", properties: { idempotencyKey: { type: "string" } } } }),
    ],
    toolPrefix: "",
    keySource: "argument",
    compileCheck: compileArgumentCheck,
  });
  it("guards tools that change something, passes read-only ones, hides names Tollgate cannot hold", () => {
    expect(list.tools.map((t) => t.name)).toEqual(["tickets.create", "tickets.count", "tickets.keyed"]);
    expect(list.tools[0]).not.toHaveProperty("outputSchema");
    expect(list.tools[0]!.inputSchema.required).toEqual(["title", "idempotencyKey"]);
    expect(list.routes.get("tickets.count")).toEqual({ kind: "pass-through" });
    expect(list.routes.get("tickets.keyed")).toMatchObject({ kind: "guarded", upstreamHasKey: true });
    expect(list.tools[2]!.inputSchema).toEqual({ type: "object", properties: { idempotencyKey: { type: "string" } } });
    expect(list.hidden.map((h) => h.name)).toEqual(["Tickets.Shout"]);
  });
  it("checks arguments against the upstream's schema, without the gateway's key", () => {
    const route = list.routes.get("tickets.create");
    if (route?.kind !== "guarded") throw new Error("expected a guarded route");
    expect(route.checkArguments({ title: "ok" })).toBeUndefined();
    expect(route.checkArguments({ title: 42 })).toMatch(/title/);
  });
});

describe("checking arguments before a claim", () => {
  it("reads JSON Schema 2020-12 by default and draft-07 when the schema names it", () => {
    const tuple = compileArgumentCheck({ type: "object", properties: { pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false } } });
    expect(tuple({ pair: ["a", 1] })).toBeUndefined();
    expect(tuple({ pair: ["a", 1, 2] })).toBeDefined();
    const draft7 = compileArgumentCheck({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { pair: { type: "array", items: [{ type: "string" }] } } });
    expect(draft7({ pair: ["a"] })).toBeUndefined();
    expect(draft7({ pair: [1] })).toBeDefined();
  });

  it("never judges formats (servers differ), and checks nothing when the schema does not compile", () => {
    const when = compileArgumentCheck({ type: "object", properties: { at: { type: "string", format: "date-time" } } });
    expect(when({ at: "2026-11-30 12:00:00" })).toBeUndefined();
    const broken = compileArgumentCheck({ type: "object", properties: { a: { $ref: "#/nowhere" } } });
    expect(broken({ a: 1 })).toBeUndefined();
  });

  it("gives two schemas that share an $id their own validators", () => {
    const a = compileArgumentCheck({ $id: "https://example.test/same.json", type: "object", required: ["a"] });
    const b = compileArgumentCheck({ $id: "https://example.test/same.json", type: "object", required: ["b"] });
    expect(a({ a: 1 })).toBeUndefined();
    expect(b({ b: 1 })).toBeUndefined();
    expect(b({ a: 1 })).toBeDefined();
  });

  it("hides a tool that runs only as a task", () => {
    const hidden = guardToolList({
      upstreamTools: [{ name: "tickets.export", inputSchema: { type: "object" }, execution: { taskSupport: "required" } }],
      toolPrefix: "",
      keySource: "argument",
      compileCheck: compileArgumentCheck,
    });
    expect(hidden.tools).toEqual([]);
    expect(hidden.hidden[0]?.why).toContain("task");
  });
});
