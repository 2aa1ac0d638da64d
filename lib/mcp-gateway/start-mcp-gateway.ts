import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { onStopSignal } from "@/lib/cli/on-stop-signal";
import { callGuardedTool } from "@/lib/mcp-gateway/call-guarded-tool";
import { NotSentError, sessionLost } from "@/lib/mcp-gateway/classify-upstream-outcome";
import type { KeySource } from "@/lib/mcp-gateway/guard-tool-list";
import { KEY_ARGUMENT, META } from "@/lib/mcp-gateway/meta-keys";
import { gatewayErrorResult } from "@/lib/mcp-gateway/refusal-result";
import { createTollgateClient } from "@/lib/mcp-gateway/tollgate-client";
import { createToolRoutes } from "@/lib/mcp-gateway/tool-routes";

// The upstream MCP server: a child process on stdio, or a remote server over Streamable HTTP.
export type UpstreamServer =
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string> }
  | { kind: "http"; url: URL; authorization?: string };

export type McpGatewayOptions = {
  upstream: UpstreamServer;
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

// How long a stopping gateway waits for calls in flight to record their outcomes.
const SIGNAL_DRAIN_MS = 15_000;
// How long a call keeps trying to record its outcome while Tollgate does not answer.
const COMPLETE_RETRY_LIMIT_MS = 5 * 60_000;
// The longest a tool call may run while it keeps reporting progress (each report restarts the
// call timeout); past it the outcome is recorded unknown like any other timeout.
const MAX_CALL_MS = 60 * 60_000;

export class UpstreamStartError extends Error {}

// An MCP server (stdio, facing the agent host) in front of an upstream MCP server (a child
// process, or a remote server over Streamable HTTP): read-only tools pass through, every other
// tool call is claimed, leased and completed in Tollgate, so a retried call never becomes a
// second effect.
export async function startMcpGateway(options: McpGatewayOptions): Promise<{ closed: Promise<number> }> {
  const upstream = new Client({ name: "tollgate-mcp-gateway", version: "0.1.0" });
  const upstreamName = options.upstream.kind === "stdio" ? options.upstream.command : options.upstream.url.origin;
  const transport = upstreamTransport(options.upstream);
  const upstreamHttp = transport instanceof StreamableHTTPClientTransport ? transport : undefined;
  try {
    await upstream.connect(transport);
  } catch (error) {
    throw new UpstreamStartError(`the upstream MCP server (${upstreamName}) did not start: ${(error as Error).message}`);
  }
  const tollgate = createTollgateClient({ baseUrl: options.tollgateUrl, apiKey: options.apiKey, requestTimeoutMs: 10_000 });
  const tools = createToolRoutes({ upstream, toolPrefix: options.toolPrefix, keySource: options.keySource, log: options.log });

  // Calls being handled, from their first step: a stopping gateway lets each record its outcome
  // and answer before it closes. `closing`: no new call starts, and none is sent upstream.
  const inFlight = new Set<Promise<unknown>>();
  let closing = false;
  // The upstream is gone (its process exited, or a remote one lost our session): calls in flight
  // end (recorded unknown, or failed when never sent), new ones are refused, and the gateway
  // exits 1 so the host starts it again. Set once the shutdown paths below exist.
  let upstreamLost: (why: string) => void = () => undefined;
  // Resolves after the calls' answers are written: the SDK writes an answer a few microtasks
  // after its handler settles, hence setImmediate (stdout is a pipe: written synchronously).
  const drain = (limitMs: number) =>
    Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => setTimeout(resolve, limitMs).unref())]).then(
      () => new Promise((resolve) => setImmediate(resolve)),
    );

  const upstreamInstructions = upstream.getInstructions();
  const server = new Server(
    { name: "tollgate-mcp-gateway", version: "0.1.0" },
    { capabilities: { tools: { listChanged: true } }, instructions: upstreamInstructions ? `${INSTRUCTIONS}\n\n${upstreamInstructions}` : INSTRUCTIONS },
  );

  // The upstream's tools changed: forget the routes and tell the host, which lists them again
  // through us (and gets them guarded).
  upstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    tools.forget();
    await server.sendToolListChanged().catch(() => undefined);
  });

  server.setRequestHandler(ListToolsRequestSchema, async (request) => tools.listPage(request.params));

  // The gateway's own timeout makes the SDK send notifications/cancelled upstream; the outcome
  // stays unknown all the same. The agent's cancellation is deliberately not passed on: once a
  // guarded call is granted, its outcome has to be recorded whether or not the caller listens.
  // Progress is always asked of the upstream (under the SDK's own token) and every report restarts
  // the timeout, which so measures the tool's silence: a long tool that says it is working is not
  // recorded unknown for it. The host gets the reports only if it asked for them.
  const callUpstream = async (
    params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> },
    onProgress?: (progress: Progress) => void,
  ) => {
    if (closing) throw new NotSentError("the gateway was stopping; the call was not sent");
    try {
      return await upstream.request({ method: "tools/call", params }, CallToolResultSchema, {
        timeout: options.callTimeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: Math.max(options.callTimeoutMs, MAX_CALL_MS),
        onprogress: (progress) => onProgress?.(progress),
      });
    } catch (error) {
      if (sessionLost(error)) upstreamLost("the remote MCP server no longer knows the gateway's session (it restarted?)");
      throw error;
    }
  };

  const handleCall = async (
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    onProgress: ((progress: Progress) => void) | undefined,
  ): Promise<CallToolResult> => {
    const { name, arguments: args = {}, _meta: meta } = params;
    const route = await tools.route(name);
    if (!route) return gatewayErrorResult(`The tool "${name}" is not available through the Tollgate gateway. Nothing was done.`);
    if (route.kind === "pass-through") return callUpstream({ name, arguments: args, ...(meta ? { _meta: forwardedMeta(meta) } : {}) }, onProgress);
    return callGuardedTool(
      { tollgate, callUpstream, log: options.log, completeRetryDelaysMs: [250, 500, 1000, 2000, 4000], completeRetryLimitMs: COMPLETE_RETRY_LIMIT_MS },
      { name, tollgateTool: route.tollgateTool, args, meta, keyInArguments: route.keyInArguments, upstreamHasKey: route.upstreamHasKey, checkArguments: route.checkArguments, onProgress },
    );
  };

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (closing) return gatewayErrorResult("The Tollgate gateway is stopping (or its tool server exited), so nothing was done. Repeat the same call with the same idempotency key once it runs again.");
    // The host's token, on the upstream's reports; a report the host cannot take is dropped.
    const progressToken = request.params._meta?.progressToken;
    const onProgress =
      progressToken === undefined
        ? undefined
        : (progress: Progress) => void extra.sendNotification({ method: "notifications/progress", params: { ...progress, progressToken } }).catch(() => undefined);
    const call = handleCall(request.params, onProgress);
    inFlight.add(call);
    return call.finally(() => inFlight.delete(call));
  });

  // Errors the transport reports outside any call (a dropped SSE stream): the status only. A
  // progress report for a call that already ended is routine, not a fault: the SDK handles a
  // notification a microtask after a response, so a report sent just before the answer lands
  // after it (and one after a timeout arrives late by nature).
  upstream.onerror = (error) => {
    const late = error.message.startsWith("Received a progress notification for an unknown token");
    options.log[late ? "debug" : "warn"]({ err: error.message.slice(0, 200) }, late ? "mcp gateway: late progress report dropped" : "mcp gateway: upstream transport error");
  };

  const closed = new Promise<number>((resolve) => {
    let code = 0;
    let upstreamClosedByUs = false;
    const closeUpstream = async () => {
      closing = true;
      upstreamClosedByUs = true;
      // A remote server is told the session ended; best effort.
      if (upstreamHttp) await upstreamHttp.terminateSession().catch(() => undefined);
      await upstream.close();
    };
    server.onclose = () => {
      void closeUpstream().finally(() => resolve(code));
    };
    upstreamLost = (why) => {
      if (closing) return;
      closing = true;
      code = 1;
      options.log.error(`mcp gateway: ${why}`);
      void drain(options.callTimeoutMs + 60_000).then(() => server.close());
    };
    upstream.onclose = () => {
      if (!upstreamClosedByUs) upstreamLost("the upstream MCP server exited");
    };
    // MCP's stdio shutdown: the host closes our stdin and waits for us to exit (the SDK's
    // transport does not watch for it). Calls in flight finish first: closing the upstream would
    // kill a tool mid-call and leave its operation unknown for nothing.
    let draining = false;
    const finishAndClose = () => {
      if (draining) return;
      draining = true;
      void drain(options.callTimeoutMs + 60_000).then(() => server.close());
    };
    process.stdin.once("end", finishAndClose);
    // A host that died, or closed its end of our stdout, makes the next answer's write fail with
    // EPIPE. Unhandled, that error killed the gateway, and with it the calls in flight whose
    // tools had acted: their outcomes were never recorded (MCP review). The answers have nowhere
    // to go, but the outcomes must be recorded: calls in flight finish, as when stdin closes.
    process.stdout.on("error", (error: Error) => {
      if (!draining) options.log.warn({ err: error.message, inFlight: inFlight.size }, "mcp gateway: the host stopped reading; finishing calls in flight");
      closing = true;
      finishAndClose();
    });
    // A host that does not wait (the SDK's client sends SIGTERM 2 s after closing stdin). A child
    // process is stopped, so calls in flight end now and record `unknown`. A remote tool keeps
    // running whatever we do, so its calls get the drain's time to answer first.
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) return;
      signalled = true;
      options.log.warn({ signal, inFlight: inFlight.size }, "mcp gateway: stopping");
      closing = true;
      const stopped = upstreamHttp ? drain(SIGNAL_DRAIN_MS).then(closeUpstream) : closeUpstream().then(() => drain(SIGNAL_DRAIN_MS));
      void stopped.finally(() => void server.close());
    };
    onStopSignal(onSignal);
  });
  await server.connect(new StdioServerTransport());
  options.log.info({ tollgate: new URL(options.tollgateUrl).origin, upstream: upstreamName }, "mcp gateway: ready");
  return { closed };
}

function upstreamTransport(upstream: UpstreamServer): Transport {
  if (upstream.kind === "stdio") return new StdioClientTransport({ command: upstream.command, args: upstream.args, env: upstream.env, stderr: "inherit" });
  // Redirects only within the server's origin (the SDK's default, stated here on purpose): the
  // credential meant for this server is never sent to another.
  return new StreamableHTTPClientTransport(upstream.url, {
    requestInit: upstream.authorization ? { headers: { authorization: upstream.authorization } } : undefined,
    redirectPolicy: "same-origin",
  });
}

// A pass-through call's _meta, less Tollgate's keys and the host's progress token (the upstream
// reports progress to the gateway under the SDK's own token, which the gateway passes on).
function forwardedMeta(meta: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(meta).filter(([key]) => key !== "progressToken" && !Object.values(META).includes(key as never)));
}
