import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, LATEST_PROTOCOL_VERSION, ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { logDigest, sha256Hex } from "@/lib/crypto/digest";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider";
import { call } from "../support/http";
import { createTool } from "../support/protocol";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// The MCP gateway end to end: an MCP client (the agent host) → `tollgate mcp-gateway` (a real
// process) → an upstream MCP server whose tools act on a fake provider, with a real Tollgate in
// between. What counts is the provider's effects, not the answers.
let app: TestApp;
let acme: TenantKeys;
let provider: FakeProvider;
const gateways: { client: Client; stderr: string[] }[] = [];


// node's arguments for the gateway (under tsx's loader: one process, not tsx's two) and for the
// test upstream server (plain JavaScript).
const GATEWAY = ["--import", "tsx", "lib/cli/main.ts", "mcp-gateway"];
const UPSTREAM = ["--", process.execPath, "test/support/mcp-upstream.mjs"];

async function startGateway(options: { flags?: string[]; tollgateUrl?: string; env?: Record<string, string> } = {}): Promise<{ client: Client; stderr: string[] }> {
  const flags = options.flags ?? [];
  const upstream = flags.includes("--upstream-url") ? [] : UPSTREAM;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...GATEWAY, "--call-timeout", "1", ...flags, ...upstream],
    env: {
      ...(process.env as Record<string, string>),
      TOLLGATE_URL: options.tollgateUrl ?? app.baseUrl,
      TOLLGATE_API_KEY: acme.agent,
      PROVIDER_URL: provider.url,
      LOG_LEVEL: "info",
      ...options.env,
    },
    stderr: "pipe",
  });
  const stderr: string[] = [];
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const client = new Client({ name: "test-agent-host", version: "1.0.0" });
  await client.connect(transport);
  const gateway = { client, stderr };
  gateways.push(gateway);
  return gateway;
}

// The gateway as a host sees it on the wire: JSON-RPC lines on stdin and stdout, so a test can
// close stdin or signal the process while a call is in flight and read its exit code.
async function startRawGateway() {
  const child = spawn(process.execPath, [...GATEWAY, ...UPSTREAM], {
    env: { ...process.env, TOLLGATE_URL: app.baseUrl, TOLLGATE_API_KEY: acme.agent, PROVIDER_URL: provider.url },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  let buffered = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const message = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      waiting.get(message.id)?.(message);
    }
  });
  child.stderr.resume();
  let nextId = 1;
  const request = (method: string, params: unknown) => {
    const id = nextId++;
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return new Promise<{ result?: unknown; error?: unknown }>((resolve) => waiting.set(id, resolve));
  };
  await request("initialize", { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw-host", version: "1" } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  return { child, exited, request };
}

// client.request, not client.callTool: the gateway's answers are checked as they come, without
// the client's own output-schema validation in the way.
const callTool = (client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  client.request({ method: "tools/call", params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } }, CallToolResultSchema, { timeout: 30_000 });

const text = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
const operationMeta = (result: CallToolResult) => result._meta?.["io.tollgate/operation"] as Record<string, unknown>;
const operations = (tool: string) => app.db.operation.findMany({ where: { tenantId: acme.tenantId, tool }, orderBy: { createdAt: "asc" } });

let gateway: { client: Client; stderr: string[] };

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  provider = await startFakeProvider();
  for (const name of ["tickets.create", "tickets.slow", "tickets.refused", "tickets.vague", "tickets.crash", "tickets.keyed", "tickets.progress", "tickets.binary"]) await createTool(app.baseUrl, [acme], {}, name);
  await createTool(app.baseUrl, [acme], { policy: { approval: "required" } }, "payments.refund");
  await createTool(app.baseUrl, [acme], { policy: { leaseSeconds: 1 } }, "tickets.steady");
  gateway = await startGateway();
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.client.close()));
  await provider?.stop();
  await app?.stop();
});

describe("tollgate mcp-gateway", () => {
  it("lists guarded tools with a required idempotencyKey, read-only tools as they are, and hides names Tollgate cannot hold", async () => {
    const { tools } = await gateway.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("tickets.create")?.inputSchema.required).toEqual(["title", "idempotencyKey"]);
    expect(byName.get("tickets.create")?.inputSchema.properties).toHaveProperty("idempotencyKey");
    // Guarded tools lose their outputSchema (a repeat may answer in words); read-only ones keep all.
    expect(byName.get("tickets.create")).not.toHaveProperty("outputSchema");
    expect(byName.get("tickets.count")).toMatchObject({ annotations: { readOnlyHint: true } });
    expect(byName.get("tickets.count")!.inputSchema.properties ?? {}).not.toHaveProperty("idempotencyKey");
    expect(byName.get("tickets.keyed")?.inputSchema.required).toEqual(["title", "idempotencyKey"]);
    expect(byName.has("Tickets.Shout")).toBe(false);
    expect(gateway.client.getInstructions()).toContain("Upstream instructions.");
    const hidden = await callTool(gateway.client, "Tickets.Shout", { title: "x", idempotencyKey: "k-shout" });
    expect(hidden.isError).toBe(true);
  });

  it("acts once for a key: the repeat replays the stored result, and the provider got the operation's downstream key", async () => {
    const first = await gateway.client.callTool({ name: "tickets.create", arguments: { title: "Printer on fire", idempotencyKey: "mcp-key-1" } }) as CallToolResult;
    expect(first.isError).toBeFalsy();
    expect(operationMeta(first)).toMatchObject({ replayed: false, attempt: 1, outcome: "succeeded", completed: "recorded" });
    const again = await callTool(gateway.client, "tickets.create", { title: "Printer on fire", idempotencyKey: "mcp-key-1" });
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(again.content).toEqual(first.content);
    expect(operationMeta(again)).toMatchObject({ replayed: true, state: "succeeded", operationId: operationMeta(first).operationId });

    const [op] = await operations("tickets.create");
    expect(op).toMatchObject({ id: operationMeta(first).operationId, state: "succeeded" });
    expect(provider.effects()).toHaveLength(1);
    expect(provider.effects()[0]).toMatchObject({ downstreamKey: op!.downstreamKey, body: { title: "Printer on fire" } });
    // The key is not one of the action's arguments: not in the fingerprinted args, not sent upstream.
    expect(op!.args).toEqual({ title: "Printer on fire" });
  });

  it("twelve concurrent calls with one key through two gateways make one effect", async () => {
    const second = await startGateway();
    const before = provider.effects().length;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => callTool(i % 2 ? second.client : gateway.client, "tickets.create", { title: "Race", idempotencyKey: "mcp-race" })),
    );
    expect(provider.effects().length - before).toBe(1);
    const granted = results.filter((r) => operationMeta(r).replayed === false);
    expect(granted).toHaveLength(1);
    for (const r of results.filter((x) => x !== granted[0])) {
      // Either the stored result (after the winner completed) or "in progress: repeat later".
      if (r.isError) expect(operationMeta(r)).toMatchObject({ status: 409, code: "operation-in-progress" });
      else expect(r.structuredContent).toEqual(granted[0]!.structuredContent);
    }
  });

  it("the same key with other arguments is refused with the differing path and does nothing", async () => {
    const before = provider.effects().length;
    const reused = await callTool(gateway.client, "tickets.create", { title: "Another", idempotencyKey: "mcp-key-1" });
    expect(reused.isError).toBe(true);
    expect(operationMeta(reused)).toMatchObject({ status: 422, code: "idempotency-key-reused" });
    expect(text(reused)).toContain("args.title");
    expect(text(reused)).not.toContain("Another");
    // A model retrying after a timeout with reworded arguments is told to repeat the original, not to mint a key.
    expect(text(reused)).toContain("repeat it with exactly its original arguments and the same key; do not use a new key for it");
    expect(provider.effects().length).toBe(before);
  });

  it("arguments the tool's schema refuses are refused before anything is claimed", async () => {
    const before = provider.effects().length;
    const count = (await operations("tickets.create")).length;
    const invalid = await callTool(gateway.client, "tickets.create", { title: 42, idempotencyKey: "mcp-invalid" });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toContain("input schema");
    expect((await operations("tickets.create")).length).toBe(count);
    expect(provider.effects().length).toBe(before);
  });

  it("a key in _meta wins over the argument", async () => {
    const first = await callTool(gateway.client, "tickets.create", { title: "Meta", idempotencyKey: "arg-1" }, { "io.tollgate/idempotency-key": "meta-1" });
    const again = await callTool(gateway.client, "tickets.create", { title: "Meta", idempotencyKey: "arg-2" }, { "io.tollgate/idempotency-key": "meta-1" });
    expect(operationMeta(again)).toMatchObject({ replayed: true, operationId: operationMeta(first).operationId });
  });

  it("a tool with its own idempotencyKey argument gets the raw key; Tollgate stores only its digest", async () => {
    const done = await callTool(gateway.client, "tickets.keyed", { title: "Keyed", idempotencyKey: "mcp-keyed-raw" });
    expect(done.isError).toBeFalsy();
    expect(provider.effects().at(-1)!.body).toMatchObject({ upstreamKey: "mcp-keyed-raw" });
    const [op] = await operations("tickets.keyed");
    expect(JSON.stringify(op!.args)).not.toContain("mcp-keyed-raw");
    expect(op!.args).toEqual({ title: "Keyed", idempotencyKey: `sha256:${sha256Hex("mcp-keyed-raw")}` });
    const again = await callTool(gateway.client, "tickets.keyed", { title: "Keyed", idempotencyKey: "mcp-keyed-raw" });
    expect(operationMeta(again)).toMatchObject({ replayed: true });
  });

  it("a call without a key stores nothing and calls nothing", async () => {
    const before = provider.effects().length;
    const count = (await operations("tickets.create")).length;
    const missing = await callTool(gateway.client, "tickets.create", { title: "No key" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("idempotencyKey");
    expect((await operations("tickets.create")).length).toBe(count);
    expect(provider.effects().length).toBe(before);
  });

  // MCP review: Tollgate answered 400 to a complete whose result held U+0000, the gateway took that
  // as final, the operation was left processing (then unknown), and with takeover deduplicated a
  // repeat ran the tool again. Now the outcome is recorded with the result's text cleaned (U+0000
  // → U+FFFD), so a repeat still shows what the tool answered.
  it("a result Tollgate cannot store is kept cleaned: the outcome is recorded, the first caller gets the whole result, a repeat the cleaned one", async () => {
    const before = provider.effects().length;
    const first = await callTool(gateway.client, "tickets.binary", { title: "Dump", idempotencyKey: "mcp-binary-1" });
    expect(text(first)).toContain("\u0000");
    expect(operationMeta(first)).toMatchObject({ outcome: "succeeded", completed: "recorded" });
    const effect = provider.effects().at(-1)!;
    const [op] = await operations("tickets.binary");
    expect(op).toMatchObject({ state: "succeeded" });
    expect(op!.result).toMatchObject({ body: { content: [{ type: "text", text: `opened ${effect.id}\uFFFD(raw bytes follow)` }] } });
    const again = await callTool(gateway.client, "tickets.binary", { title: "Dump", idempotencyKey: "mcp-binary-1" });
    expect(operationMeta(again)).toMatchObject({ replayed: true, state: "succeeded" });
    expect(text(again)).toBe(`opened ${effect.id}\uFFFD(raw bytes follow)`);
    expect(provider.effects().length - before).toBe(1);
  });

  it("refuses an idempotency key Tollgate would not take before claiming anything (fetch would trim it, or fail on it)", async () => {
    const before = await app.db.operation.count({ where: { tenantId: acme.tenantId } });
    for (const key of ["mcp-space ", "\tmcp-tab", "ключ", "a b"]) {
      const refused = await callTool(gateway.client, "tickets.create", { title: "Odd key", idempotencyKey: key });
      expect(refused.isError, key).toBe(true);
      expect(text(refused)).toContain("printable ASCII");
    }
    expect(await app.db.operation.count({ where: { tenantId: acme.tenantId } })).toBe(before);
  });

  it("a tool that times out after acting leaves the operation unknown, and a repeat is refused instead of acting again", async () => {
    const before = provider.effects().length;
    const timedOut = await callTool(gateway.client, "tickets.slow", { title: "Slow", idempotencyKey: "mcp-slow" });
    expect(timedOut.isError).toBe(true);
    expect(operationMeta(timedOut)).toMatchObject({ outcome: "unknown", completed: "recorded" });
    expect(text(timedOut)).toContain("Do not retry");
    const [op] = await operations("tickets.slow");
    expect(op).toMatchObject({ state: "unknown" });
    const repeat = await callTool(gateway.client, "tickets.slow", { title: "Slow", idempotencyKey: "mcp-slow" });
    expect(operationMeta(repeat)).toMatchObject({ status: 409, code: "outcome-unknown" });
    expect(provider.effects().length - before).toBe(1);

    // An operator settles it from the provider's evidence; a host using the SDK's callTool (which
    // checks results against output schemas) then gets the settled outcome as a plain success.
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${op!.id}/resolve`, { key: acme.admin, body: { outcome: "succeeded", reason: "ticket found in the provider" } });
    expect(resolved.status, resolved.text).toBe(200);
    const settled = await gateway.client.callTool({ name: "tickets.slow", arguments: { title: "Slow", idempotencyKey: "mcp-slow" } });
    expect(settled.isError).toBeFalsy();
    expect(text(settled as CallToolResult)).toContain("already succeeded");
    expect(provider.effects().length - before).toBe(1);
  });

  it("a tool error the tool calls a definite failure is stored as failed and replayed; one it does not qualify is unknown", async () => {
    const refused = await callTool(gateway.client, "tickets.refused", { title: "Bad", idempotencyKey: "mcp-refused" });
    expect(refused.isError).toBe(true);
    expect(operationMeta(refused)).toMatchObject({ outcome: "failed" });
    expect((await operations("tickets.refused"))[0]).toMatchObject({ state: "failed" });
    const replay = await callTool(gateway.client, "tickets.refused", { title: "Bad", idempotencyKey: "mcp-refused" });
    expect(replay.isError).toBe(true);
    expect(operationMeta(replay)).toMatchObject({ replayed: true, state: "failed" });
    expect(text(replay)).toContain("title rejected by the ticket system");

    const vague = await callTool(gateway.client, "tickets.vague", { title: "Vague", idempotencyKey: "mcp-vague" });
    expect(operationMeta(vague)).toMatchObject({ outcome: "unknown" });
    expect((await operations("tickets.vague"))[0]).toMatchObject({ state: "unknown" });
  });

  it("a tool that needs approval is not called until a person approves; then it acts once", async () => {
    const before = provider.effects().length;
    const waiting = await callTool(gateway.client, "payments.refund", { amount: 40, idempotencyKey: "mcp-refund" });
    expect(waiting.isError).toBe(true);
    expect(operationMeta(waiting)).toMatchObject({ status: 202 });
    expect(provider.effects().length).toBe(before);
    const [op] = await operations("payments.refund");
    const approval = await app.db.approval.findFirstOrThrow({ where: { operationId: op!.id } });
    const decided = await call(app.baseUrl, "POST", `/api/v1/approvals/${approval.id}/decision`, { key: acme.approver, body: { decision: "approve", reason: "customer asked" } });
    expect(decided.status, decided.text).toBe(200);
    const done = await callTool(gateway.client, "payments.refund", { amount: 40, idempotencyKey: "mcp-refund" });
    expect(done.isError).toBeFalsy();
    expect(text(done)).toContain("refunded 40");
    await callTool(gateway.client, "payments.refund", { amount: 40, idempotencyKey: "mcp-refund" });
    expect(provider.effects().length - before).toBe(1);
  });

  it("read-only tools pass through without an operation", async () => {
    const count = await app.db.operation.count({ where: { tenantId: acme.tenantId } });
    const read = await callTool(gateway.client, "tickets.count", {});
    expect(text(read)).toMatch(/^read \d+$/);
    expect(await app.db.operation.count({ where: { tenantId: acme.tenantId } })).toBe(count);
  });

  it("passes the tool's progress on to a host that asked, and a tool reporting progress outlives the call timeout", async () => {
    // tickets.progress takes 1.8 s and more (its last 0.6 s step, then the provider's call) against
    // a 1.5 s timeout, reporting at 0, 0.6 and 1.2 s. With the suite's 1 s, its last stretch had
    // 0.4 s for the provider call, which a loaded CI machine once took (2026-12-03).
    const gateway = await startGateway({ flags: ["--call-timeout", "1.5"] });
    const before = provider.effects().length;
    const reports: { progress: number; total?: number; message?: string }[] = [];
    const params = { name: "tickets.progress", arguments: { title: "Step by step", idempotencyKey: "mcp-progress" } };
    const done = await gateway.client.request({ method: "tools/call", params }, CallToolResultSchema, { timeout: 30_000, onprogress: (p) => reports.push(p) });
    expect(reports).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
    expect(operationMeta(done)).toMatchObject({ outcome: "succeeded", completed: "recorded" });
    // A host that did not ask gets no reports, and the upstream's keep the call alive all the same.
    const quiet = await callTool(gateway.client, "tickets.progress", { title: "Quietly", idempotencyKey: "mcp-progress-quiet" });
    expect(operationMeta(quiet)).toMatchObject({ outcome: "succeeded", completed: "recorded" });
    expect(provider.effects().length - before).toBe(2);
    // A read-only tool's progress reaches the host too.
    const scanned: number[] = [];
    const scan = await gateway.client.request({ method: "tools/call", params: { name: "tickets.scan", arguments: {} } }, CallToolResultSchema, {
      timeout: 30_000,
      onprogress: (p) => scanned.push(p.progress),
    });
    expect(text(scan)).toBe("scanned");
    expect(scanned.slice(0, 2)).toEqual([1, 2]);
    // Its last report came right before the answer and may have been dropped, without alarm.
    expect(gateway.stderr.join("")).not.toContain("upstream transport error");
  });

  it("calls nothing when Tollgate cannot be reached or does not know the tool", async () => {
    const before = provider.effects().length;
    const offline = await startGateway({ tollgateUrl: "http://127.0.0.1:9" });
    const unreachable = await callTool(offline.client, "tickets.create", { title: "Offline", idempotencyKey: "mcp-offline" });
    expect(unreachable.isError).toBe(true);
    expect(text(unreachable)).toContain("could not be reached");
    const prefixed = await startGateway({ flags: ["--tool-prefix", "unregistered."] });
    const unknownTool = await callTool(prefixed.client, "tickets.create", { title: "Unknown", idempotencyKey: "mcp-unknown-tool" });
    expect(operationMeta(unknownTool)).toMatchObject({ status: 404, code: "tool-not-found" });
    expect(provider.effects().length).toBe(before);
  });

  it("heartbeats keep the lease of a tool that runs past it: a repeat meanwhile waits instead of finding the outcome unknown", async () => {
    // The gateway reads the lease's length against Tollgate's clock, from the Date header.
    expect(Date.parse((await call(app.baseUrl, "GET", "/api/live")).headers.get("date") ?? "")).toBeGreaterThan(0);
    const patient = await startGateway({ flags: ["--call-timeout", "20"] });
    const before = provider.effects().length;
    const running = callTool(patient.client, "tickets.steady", { title: "Steady", idempotencyKey: "mcp-steady" });
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    const meanwhile = await callTool(gateway.client, "tickets.steady", { title: "Steady", idempotencyKey: "mcp-steady" });
    expect(operationMeta(meanwhile)).toMatchObject({ status: 409, code: "operation-in-progress" });
    const done = await running;
    expect(operationMeta(done)).toMatchObject({ outcome: "succeeded", completed: "recorded" });
    expect((await operations("tickets.steady"))[0]).toMatchObject({ state: "succeeded", attemptCount: 1 });
    expect(provider.effects().length - before).toBe(1);
  });

  it("with --key-source meta the host's key in _meta is used and the tools' schemas stay as they are", async () => {
    const hosted = await startGateway({ flags: ["--key-source", "meta"] });
    const { tools } = await hosted.client.listTools();
    expect(tools.find((t) => t.name === "tickets.create")?.inputSchema.required).toEqual(["title"]);
    const before = provider.effects().length;
    const meta = { "io.tollgate/idempotency-key": "host-step-7", "io.tollgate/workflow-id": "wf_mcp" };
    const first = await callTool(hosted.client, "tickets.create", { title: "From the host" }, meta);
    const again = await callTool(hosted.client, "tickets.create", { title: "From the host" }, meta);
    expect(operationMeta(again)).toMatchObject({ replayed: true, operationId: operationMeta(first).operationId });
    expect(provider.effects().length - before).toBe(1);
    const attempt = await app.db.attempt.findFirstOrThrow({ where: { operationId: String(operationMeta(first).operationId) } });
    expect(attempt.workflowId).toBe("wf_mcp");
    const keyless = await callTool(hosted.client, "tickets.create", { title: "No key" });
    expect(keyless.isError).toBe(true);
    expect(provider.effects().length - before).toBe(1);
  });

  it("an upstream that dies mid-call leaves the operation unknown, answers the caller, then the gateway exits", async () => {
    const doomed = await startGateway();
    const closed = new Promise<void>((resolve) => (doomed.client.onclose = resolve));
    const before = provider.effects().length;
    const crashed = await callTool(doomed.client, "tickets.crash", { title: "Crash", idempotencyKey: "mcp-crash" });
    expect(crashed.isError).toBe(true);
    expect(operationMeta(crashed)).toMatchObject({ outcome: "unknown", completed: "recorded" });
    expect((await operations("tickets.crash"))[0]).toMatchObject({ state: "unknown" });
    expect(provider.effects().length - before).toBe(1);
    await closed;
  });

  it("when the host closes its stdin, a call in flight finishes and answers before the gateway exits 0", async () => {
    const raw = await startRawGateway();
    const before = provider.effects().length;
    const answer = raw.request("tools/call", { name: "tickets.steady", arguments: { title: "Drain", idempotencyKey: "mcp-drain" } });
    await vi.waitFor(async () => expect((await operations("tickets.steady")).some((o) => o.state === "processing")).toBe(true), { timeout: 10_000, interval: 50 });
    raw.child.stdin.end();
    expect((await answer).result).toMatchObject({ _meta: { "io.tollgate/operation": { outcome: "succeeded", completed: "recorded" } } });
    expect(await raw.exited).toBe(0);
    expect(provider.effects().length - before).toBe(1);
  });

  // MCP review: a host that dies closes our stdout too; the first answer written then raised an
  // unhandled EPIPE, the gateway died, and a call whose tool had acted was never recorded.
  it("when the host stops reading its answers, calls in flight are still recorded and the gateway exits 0", async () => {
    const raw = await startRawGateway();
    const before = provider.effects().length;
    // Two calls: the first to finish (1.8 s) writes the first answer into the closed pipe while
    // the other (2.5 s, it acted at once) is still running.
    void raw.request("tools/call", { name: "tickets.progress", arguments: { title: "Orphaned first", idempotencyKey: "mcp-epipe-1" } });
    void raw.request("tools/call", { name: "tickets.steady", arguments: { title: "Orphaned second", idempotencyKey: "mcp-epipe-2" } });
    const byKey = (key: string) => app.db.operation.findFirst({ where: { tenantId: acme.tenantId, keyDigest: sha256Hex(key) } });
    // Both claimed (the 2.5 s call is then still running, whatever a slow machine did meanwhile).
    await vi.waitFor(async () => expect(Boolean((await byKey("mcp-epipe-1")) && (await byKey("mcp-epipe-2")))).toBe(true), { timeout: 10_000, interval: 50 });
    // The host is gone: it reads nothing more, and its end of our stdin closes.
    raw.child.stdout.destroy();
    raw.child.stdin.end();
    expect(await raw.exited).toBe(0);
    expect((await byKey("mcp-epipe-1"))?.state).toBe("succeeded");
    expect((await byKey("mcp-epipe-2"))?.state).toBe("succeeded");
    expect(provider.effects().length - before).toBe(2);
  });

  it("on SIGTERM a call in flight is recorded unknown (the upstream is stopped), answered, and the gateway exits 0", async () => {
    const raw = await startRawGateway();
    const answer = raw.request("tools/call", { name: "tickets.steady", arguments: { title: "Terminated", idempotencyKey: "mcp-sigterm" } });
    await vi.waitFor(() => expect(provider.effects().some((e) => e.body.title === "Terminated")).toBe(true), { timeout: 10_000, interval: 50 });
    raw.child.kill("SIGTERM");
    // A second signal (a host that insists, or tsx relaying it under `npx tsx`) changes nothing.
    await new Promise((r) => setTimeout(r, 100));
    raw.child.kill("SIGTERM");
    const result = (await answer).result as CallToolResult;
    expect(result).toMatchObject({ isError: true, _meta: { "io.tollgate/operation": { outcome: "unknown", completed: "recorded" } } });
    expect(await raw.exited).toBe(0);
    const operationId = operationMeta(result).operationId;
    expect((await operations("tickets.steady")).find((o) => o.id === operationId)).toMatchObject({ state: "unknown" });
  });

  it("passes the upstream's tool-list change on, and lists the new tool guarded", async () => {
    await createTool(app.baseUrl, [acme], {}, "tickets.add-archive");
    const changed = new Promise<void>((resolve) => gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()));
    await callTool(gateway.client, "tickets.add-archive", { idempotencyKey: "mcp-add-archive" });
    await changed;
    const { tools } = await gateway.client.listTools();
    expect(tools.find((t) => t.name === "tickets.archive")?.inputSchema.required).toEqual(["id", "idempotencyKey"]);
  });

  it("guards a remote upstream over Streamable HTTP, sending it the configured Authorization", async () => {
    const remote = spawn(process.execPath, ["test/support/mcp-upstream.mjs", "--http"], {
      env: { ...process.env, PROVIDER_URL: provider.url, EXPECTED_AUTHORIZATION: "Bearer upstream-secret" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const port = await new Promise<string>((resolve) => remote.stdout.on("data", (chunk: Buffer) => resolve(/listening (\d+)/.exec(chunk.toString())?.[1] ?? "")));
      const url = `http://127.0.0.1:${port}/mcp`;
      const before = provider.effects().length;
      const viaHttp = await startGateway({ flags: ["--upstream-url", url], env: { TOLLGATE_UPSTREAM_AUTHORIZATION: "Bearer upstream-secret" } });
      const first = await callTool(viaHttp.client, "tickets.create", { title: "Remote", idempotencyKey: "mcp-remote" });
      const again = await callTool(viaHttp.client, "tickets.create", { title: "Remote", idempotencyKey: "mcp-remote" });
      expect(operationMeta(first)).toMatchObject({ outcome: "succeeded" });
      expect(operationMeta(again)).toMatchObject({ replayed: true, operationId: operationMeta(first).operationId });
      expect(provider.effects().length - before).toBe(1);

      // Without the credential the remote server answers 401 at its door: the gateway does not start.
      await expect(startGateway({ flags: ["--upstream-url", url] })).rejects.toThrow();
      // The credential never goes to a remote server over plain http.
      const cleartext = spawn(process.execPath, [...GATEWAY, "--upstream-url", "http://tickets.example/mcp"], {
        env: { ...process.env, TOLLGATE_API_KEY: acme.agent, TOLLGATE_UPSTREAM_AUTHORIZATION: "Bearer upstream-secret" },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let refusal = "";
      cleartext.stderr.on("data", (chunk: Buffer) => (refusal += chunk.toString()));
      expect(await new Promise((resolve) => cleartext.once("exit", resolve))).toBe(2);
      expect(refusal).toContain("must be https");
    } finally {
      remote.kill();
    }
  });

  it("logs a digest of each key, never the key", async () => {
    const logs = gateway.stderr.join("");
    expect(logs).toContain(logDigest("mcp-key-1"));
    expect(logs).not.toContain("mcp-key-1");
    expect(logs).not.toContain(acme.agent);
  });
});
