import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { toolNameSchema } from "@/lib/tools/tool-schema";
import { KEY_ARGUMENT } from "@/lib/mcp-gateway/meta-keys";

export type KeySource = "argument" | "meta";

// Checks a call's arguments against the upstream tool's input schema: the message when they do
// not fit, undefined when they do.
export type ArgumentCheck = (args: Record<string, unknown>) => string | undefined;

// How the gateway treats one upstream tool: read-only tools pass through (a repeated read has no
// effect to duplicate), every other tool is guarded under a Tollgate tool name.
export type ToolRoute =
  | { kind: "pass-through" }
  | { kind: "guarded"; tollgateTool: string; keyInArguments: boolean; upstreamHasKey: boolean; checkArguments: ArgumentCheck };

export type GuardedToolList = { tools: Tool[]; routes: Map<string, ToolRoute>; hidden: { name: string; why: string }[] };

const KEY_DESCRIPTION =
  "Idempotency key for this action: a new unique value (e.g. a UUID) for each new action, and the SAME value when you " +
  "retry the same action after a timeout or error, so it is never carried out twice.";

// Rewrites the upstream's tool list for the agent. A guarded tool whose Tollgate name does not fit
// Tollgate's tool names is hidden rather than exposed unguarded: an unprotected effect is the one
// thing the gateway exists to prevent. A guarded tool loses its outputSchema: a repeat may answer
// with words instead of the structured result (a result too large to keep, an operation an
// operator settled), and a host validating against the schema would call that success an error.
export function guardToolList(options: {
  upstreamTools: Tool[];
  toolPrefix: string;
  keySource: KeySource;
  compileCheck: (schema: Tool["inputSchema"]) => ArgumentCheck;
}): GuardedToolList {
  const tools: Tool[] = [];
  const routes = new Map<string, ToolRoute>();
  const hidden: { name: string; why: string }[] = [];
  for (const tool of options.upstreamTools) {
    // The gateway calls tools plainly, never as tasks: a tool that only runs as a task would
    // answer every call with an error, after a claim.
    if (tool.execution?.taskSupport === "required") {
      hidden.push({ name: tool.name, why: "it runs only as a task, which the gateway does not support" });
      continue;
    }
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
    const { outputSchema: _dropped, ...rest } = tool;
    tools.push({ ...rest, inputSchema });
    routes.set(tool.name, { kind: "guarded", tollgateTool, keyInArguments, upstreamHasKey, checkArguments: options.compileCheck(tool.inputSchema) });
  }
  return { tools, routes, hidden };
}
