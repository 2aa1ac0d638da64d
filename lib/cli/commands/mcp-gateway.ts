import pino from "pino";
import { CliError, parseFlags } from "@/lib/cli/commands/run-command";
import { logLevel, mcpGatewayEnv, upstreamEnvironment } from "@/lib/env";
import { startMcpGateway, UpstreamStartError } from "@/lib/mcp-gateway/start-mcp-gateway";

// `tollgate mcp-gateway [flags] -- <upstream command> [args…]` (or `--upstream-url <url>`): an MCP
// server on stdin/stdout for an agent host, in front of the MCP server the command starts (or
// the remote one at the URL, over Streamable HTTP). stdout is the protocol channel, so
// everything else (logs) goes to stderr.
export async function mcpGatewayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    {
      "tool-prefix": { type: "string" },
      "key-source": { type: "string" },
      "call-timeout": { type: "string" },
      "upstream-url": { type: "string" },
    },
    Number.MAX_SAFE_INTEGER,
  );
  const [command, ...commandArgs] = positionals;
  const upstreamUrl = values["upstream-url"];
  if (!command && !upstreamUrl) throw new CliError("the upstream MCP server is required: a command after -- (mcp-gateway -- node tickets-server.js) or --upstream-url https://…/mcp");
  if (command && upstreamUrl) throw new CliError("give the upstream MCP server either as a command after -- or as --upstream-url, not both");
  let url: URL | undefined;
  if (upstreamUrl) {
    url = URL.canParse(upstreamUrl) ? new URL(upstreamUrl) : undefined;
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) throw new CliError("--upstream-url must be an http(s) URL");
    if (url.username || url.password) throw new CliError("--upstream-url must not hold credentials; set TOLLGATE_UPSTREAM_AUTHORIZATION instead");
  }
  const keySource = values["key-source"] ?? "argument";
  if (keySource !== "argument" && keySource !== "meta") throw new CliError("--key-source must be argument or meta");
  const callTimeoutSeconds = Number(values["call-timeout"] ?? "60");
  if (!Number.isFinite(callTimeoutSeconds) || callTimeoutSeconds <= 0 || callTimeoutSeconds > 3600) throw new CliError("--call-timeout must be seconds between 0 and 3600");
  let gatewayEnv;
  try {
    gatewayEnv = mcpGatewayEnv();
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  // The upstream's credential never crosses a network in clear text.
  const loopback = url && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url?.protocol === "http:" && !loopback && gatewayEnv.TOLLGATE_UPSTREAM_AUTHORIZATION) {
    throw new CliError("--upstream-url must be https when TOLLGATE_UPSTREAM_AUTHORIZATION is set (http only on localhost)");
  }
  const log = pino({ level: logLevel(), base: { service: "tollgate-mcp-gateway" }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
  const gateway = await startMcpGateway({
    upstream: url
      ? { kind: "http", url, authorization: gatewayEnv.TOLLGATE_UPSTREAM_AUTHORIZATION }
      : { kind: "stdio", command: command!, args: commandArgs, env: upstreamEnvironment() },
    tollgateUrl: gatewayEnv.TOLLGATE_URL,
    apiKey: gatewayEnv.TOLLGATE_API_KEY,
    toolPrefix: values["tool-prefix"] ?? "",
    keySource,
    callTimeoutMs: Math.round(callTimeoutSeconds * 1000),
    log,
  }).catch((error: unknown) => {
    throw error instanceof UpstreamStartError ? new CliError(error.message) : error;
  });
  // Exit once closed, even if a call is still retrying its complete against an unreachable
  // Tollgate: the host has let go, and the lease then lapses as for any stopped executor.
  process.exit(await gateway.closed);
}
