import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { toolNameSchema } from "@/lib/tools/tool-schema";
import { KEY_ARGUMENT } from "@/lib/mcp-gateway/meta-keys";

export type KeySource = "argument" | "meta";

// How the gateway treats one upstream tool: read-only tools pass through (a repeated read has no
// effect to duplicate), every other tool is guarded under a Tollgate tool name.
export type ToolRoute = { kind: "pass-through" } | { kind: "guarded"; tollgateTool: string; keyInArguments: boolean; upstreamHasKey: boolean };

export type GuardedToolList = { tools: Tool[]; routes: Map<string, ToolRoute>; hidden: { name: string; why: string }[] };

const KEY_DESCRIPTION =
  "Idempotency key for this action: a new unique value (e.g. a UUID) for each new action, and the SAME value when you " +
  "retry the same action after a timeout or error, so it is never carried out twice.";

// Rewrites the upstream's tool list for the agent. A guarded tool whose Tollgate name does not fit
// Tollgate's tool names is hidden rather than exposed unguarded: an unprotected effect is the one
// thing the gateway exists to prevent.
export function guardToolList(options: { upstreamTools: Tool[]; toolPrefix: string; keySource: KeySource }): GuardedToolList {
  const tools: Tool[] = [];
  const routes = new Map<string, ToolRoute>();
  const hidden: { name: string; why: string }[] = [];
  for (const tool of options.upstreamTools) {
    if (tool.annotations?.readOnlyHint === true) {
      tools.push(tool);
      routes.set(tool.name, { kind: "pass-through" });
      continue;
    }
    const tollgateTool = `${options.toolPrefix}${tool.name}`;
    if (!toolNameSchema.safeParse(tollgateTool).success) {
      hidden.push({ name: tool.name, why: `"${tollgateTool}" is not a Tollgate tool name (^[a-z][a-z0-9_.-]{0,99}$); use --tool-prefix or rename the tool` });
      continue;
    }
    const properties = { ...(tool.inputSchema.properties ?? {}) } as Record<string, object>;
    const upstreamHasKey = Object.hasOwn(properties, KEY_ARGUMENT);
    const keyInArguments = options.keySource === "argument";
    let inputSchema = tool.inputSchema;
    if (keyInArguments && !upstreamHasKey) {
      properties[KEY_ARGUMENT] = { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$", description: KEY_DESCRIPTION };
      inputSchema = { ...tool.inputSchema, properties, required: [...(tool.inputSchema.required ?? []), KEY_ARGUMENT] };
    }
    tools.push({ ...tool, inputSchema });
    routes.set(tool.name, { kind: "guarded", tollgateTool, keyInArguments, upstreamHasKey });
  }
  return { tools, routes, hidden };
}
