import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ArgumentCheck } from "@/lib/mcp-gateway/guard-tool-list";

// Arguments the upstream tool would refuse are refused before anything is claimed: after a claim,
// an upstream's "invalid arguments" cannot be told apart from an error raised after it acted
// (the SDK's own server reports both as errors), and would leave the operation unknown.
//
// Only the schema's structure is checked, never `format` (servers differ: pydantic takes a
// date-time without a zone, ajv-formats does not). MCP's default dialect is JSON Schema 2020-12;
// a schema that names draft-07 (or older) gets Ajv's draft-07 validator. Each schema gets its own
// instance, so a `$id` two tools share (or a tool keeps across list changes) never picks up another
// schema's validator. A schema Ajv cannot compile checks nothing: the upstream still checks.
const compiled = new Map<string, ArgumentCheck>();
const MAX_CACHED = 1000;

export function compileArgumentCheck(schema: Tool["inputSchema"]): ArgumentCheck {
  const text = JSON.stringify(schema);
  const cached = compiled.get(text);
  if (cached) return cached;
  const check = compile(schema);
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(text, check);
  return check;
}

function compile(schema: Tool["inputSchema"]): ArgumentCheck {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  const options = { strict: false, validateFormats: false, validateSchema: false, allErrors: true } as const;
  const ajv = /draft-0[4-7]/.test(dialect) ? new Ajv(options) : new Ajv2020(options);
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema);
  } catch {
    return () => undefined;
  }
  return (args) => (validate(args) ? undefined : ajv.errorsText(validate.errors, { dataVar: "arguments" }));
}
