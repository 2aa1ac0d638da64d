import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema, ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { callGuardedTool } from "@/lib/mcp-gateway/call-guarded-tool";
import { compileArgumentCheck } from "@/lib/mcp-gateway/check-arguments";
import { NotSentError } from "@/lib/mcp-gateway/classify-upstream-outcome";
import { guardToolList, type KeySource, type ToolRoute } from "@/lib/mcp-gateway/guard-tool-list";
import { KEY_ARGUMENT, META } from "@/lib/mcp-gateway/meta-keys";
import { gatewayErrorResult } from "@/lib/mcp-gateway/refusal-result";
import { createTollgateClient } from "@/lib/mcp-gateway/tollgate-client";

export type McpGatewayOptions = {
  upstream: { command: string; args: string[]; env: Record<string, string> };
  tollgateUrl: string;
  apiKey: string;
  toolPrefix: string;
  keySource: KeySource;
  callTimeoutMs: number;
  log: Logger;
};

const INSTRUCTIONS =
  `Tools that change something go through Tollgate, which carries out each action at most once. Give every new action ` +
  `a new unique "${KEY_ARGUMENT}" and reuse the same one when you retry that action; a repeat returns the first ` +
  `result instead of acting again. When a result says the outcome is unknown, do not retry the action.`;

// An MCP server (stdio, facing the agent host) in front of an upstream MCP server (a child
// process): read-only tools pass through, every other tool call is claimed, leased and
// completed in Tollgate, so a retried call never becomes a second effect.
export async function startMcpGateway(options: McpGatewayOptions): Promise<{ closed: Promise<number> }> {
  const upstream = new Client({ name: "tollgate-mcp-gateway", version: "0.1.0" });
  try {
    await upstream.connect(new StdioClientTransport({ ...options.upstream, stderr: "inherit" }));
  } catch (error) {
    throw new UpstreamStartError(`the upstream MCP server (${options.upstream.command}) did not start: ${(error as Error).message}`);
  }
  const tollgate = createTollgateClient({ baseUrl: options.tollgateUrl, apiKey: options.apiKey, requestTimeoutMs: 10_000 });
  const routes = new Map<string, ToolRoute>();
  const reportedHidden = new Set<string>();
  // Guarded calls still running: when the upstream dies, each records its outcome (unknown) and
  // answers its caller before the gateway closes.
  const inFlight = new Set<Promise<unknown>>();
  let upstreamGone = false;
  // Longest a guarded call can still take: the upstream's timeout, then the complete's retries.
  const drain = () => Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => setTimeout(resolve, options.callTimeoutMs + 20_000).unref())]);

  const remember = (upstreamTools: Tool[]) => {
    const guarded = guardToolList({ upstreamTools, toolPrefix: options.toolPrefix, keySource: options.keySource, compileCheck: compileArgumentCheck });
    for (const [name, route] of guarded.routes) routes.set(name, route);
    for (const { name, why } of guarded.hidden) {
      routes.delete(name);
      if (!reportedHidden.has(name)) options.log.warn({ upstreamTool: name }, `mcp gateway: tool hidden: ${why}`);
      reportedHidden.add(name);
    }
    return guarded.tools;
  };

  const upstreamInstructions = upstream.getInstructions();
  const server = new Server(
    { name: "tollgate-mcp-gateway", version: "0.1.0" },
    { capabilities: { tools: { listChanged: true } }, instructions: upstreamInstructions ? `${INSTRUCTIONS}\n\n${upstreamInstructions}` : INSTRUCTIONS },
  );

  // The upstream's tools changed: the host lists them again through us (and gets them guarded).
  upstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    await server.sendToolListChanged().catch(() => undefined);
  });

  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const listed = await upstream.listTools(request.params);
    return { tools: remember(listed.tools), ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args = {}, _meta: meta } = request.params;
    if (upstreamGone) return gatewayErrorResult("The tool server behind the gateway has exited, so nothing was done. Repeat the same call with the same idempotency key once the gateway is restarted.");
    if (!routes.has(name)) await refreshAllTools(upstream, remember);
    const route = routes.get(name);
    if (!route) return gatewayErrorResult(`The tool "${name}" is not available through the Tollgate gateway. Nothing was done.`);
    // The agent's cancellation is deliberately not passed on: once a guarded call is granted,
    // its outcome has to be recorded whether or not the caller still listens.
    // The gateway's own timeout makes the SDK send notifications/cancelled upstream; the outcome
    // stays unknown all the same.
    const callUpstream = async (params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> }) => {
      if (upstreamGone) throw new NotSentError("the tool server exited before the call was sent");
      return upstream.request({ method: "tools/call", params }, CallToolResultSchema, { timeout: options.callTimeoutMs });
    };
    if (route.kind === "pass-through") return callUpstream({ name, arguments: args, ...(meta ? { _meta: withoutTollgateMeta(meta) } : {}) });
    const guarded = callGuardedTool(
      { tollgate, callUpstream, log: options.log, completeRetryDelaysMs: [250, 1000, 3000] },
      { name, tollgateTool: route.tollgateTool, args, meta, keyInArguments: route.keyInArguments, upstreamHasKey: route.upstreamHasKey, checkArguments: route.checkArguments },
    );
    inFlight.add(guarded);
    return guarded.finally(() => inFlight.delete(guarded));
  });

  const closed = new Promise<number>((resolve) => {
    let code = 0;
    let agentLeft = false;
    server.onclose = () => {
      agentLeft = true;
      void upstream.close().finally(() => resolve(code));
    };
    upstream.onclose = () => {
      upstreamGone = true;
      if (agentLeft) return;
      code = 1;
      options.log.error("mcp gateway: the upstream MCP server exited");
      // setImmediate: after the SDK has written the last answers (stdout is a pipe: written synchronously).
      void drain().then(() => setImmediate(() => void server.close()));
    };
  });
  await server.connect(new StdioServerTransport());
  // MCP's stdio shutdown: the host closes our stdin and waits for us to exit. The SDK's
  // transport does not watch for that, so the gateway would outlive its host.
  // Calls in flight finish first: closing the upstream would kill a tool mid-call and leave its
  // operation unknown for nothing.
  process.stdin.once("end", () => void drain().then(() => server.close()));
  options.log.info({ tollgate: options.tollgateUrl, upstream: options.upstream.command }, "mcp gateway: ready");
  return { closed };
}

export class UpstreamStartError extends Error {}

async function refreshAllTools(upstream: Client, remember: (tools: Tool[]) => Tool[]): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await upstream.listTools(cursor ? { cursor } : undefined);
    remember(page.tools);
    cursor = page.nextCursor;
  } while (cursor);
}

function withoutTollgateMeta(meta: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(meta).filter(([key]) => !Object.values(META).includes(key as never)));
}
