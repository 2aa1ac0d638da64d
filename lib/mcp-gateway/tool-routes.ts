import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListToolsResultSchema, type ListToolsRequest, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { compileArgumentCheck } from "@/lib/mcp-gateway/check-arguments";
import { guardToolList, type KeySource, type ToolRoute } from "@/lib/mcp-gateway/guard-tool-list";

const MAX_PAGES = 100;

// The gateway's view of the upstream's tools: which are guarded, which pass through. Built from
// whole listings; a list change forgets it, so the next call lists again (a tool removed
// upstream is not claimed for nothing, and one that stopped being read-only is guarded).
export function createToolRoutes(options: { upstream: Client; toolPrefix: string; keySource: KeySource; log: Logger }) {
  let routes = new Map<string, ToolRoute>();
  const reportedHidden = new Set<string>();

  // tools/list straight, not client.listTools(): that compiles every tool's outputSchema, and
  // one schema Ajv cannot compile would fail every listing.
  const listUpstream = (params: ListToolsRequest["params"]) => options.upstream.request({ method: "tools/list", params }, ListToolsResultSchema);

  const guard = (upstreamTools: Tool[], into: Map<string, ToolRoute>) => {
    const guarded = guardToolList({ upstreamTools, toolPrefix: options.toolPrefix, keySource: options.keySource, compileCheck: compileArgumentCheck });
    for (const [name, route] of guarded.routes) into.set(name, route);
    for (const { name, why } of guarded.hidden) {
      into.delete(name);
      if (!reportedHidden.has(name)) options.log.warn({ upstreamTool: name }, `mcp gateway: tool hidden: ${why}`);
      reportedHidden.add(name);
    }
    return guarded.tools;
  };

  const refresh = async () => {
    const fresh = new Map<string, ToolRoute>();
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const listed = await listUpstream(cursor ? { cursor } : undefined);
      guard(listed.tools, fresh);
      cursor = listed.nextCursor;
      if (!cursor || seen.has(cursor)) break;
      seen.add(cursor);
    }
    routes = fresh;
  };

  return {
    // One page for the host, as the upstream paged it.
    listPage: async (params: ListToolsRequest["params"]) => {
      const listed = await listUpstream(params);
      return { tools: guard(listed.tools, routes), ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
    },
    route: async (name: string): Promise<ToolRoute | undefined> => {
      if (!routes.has(name)) await refresh();
      return routes.get(name);
    },
    forget: () => {
      routes = new Map();
    },
  };
}
