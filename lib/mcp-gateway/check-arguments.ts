import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { ArgumentCheck } from "@/lib/mcp-gateway/guard-tool-list";

const validator = new AjvJsonSchemaValidator();

// Arguments the upstream tool would refuse are refused before anything is claimed: after a claim,
// an upstream's "invalid arguments" cannot be told apart from an error raised after it acted
// (the SDK's own server reports both as errors), and would leave the operation unknown.
// A schema the validator cannot compile checks nothing (the upstream still checks).
export function compileArgumentCheck(schema: Tool["inputSchema"]): ArgumentCheck {
  let check: ReturnType<typeof validator.getValidator>;
  try {
    check = validator.getValidator(schema as Parameters<typeof validator.getValidator>[0]);
  } catch {
    return () => undefined;
  }
  return (args) => {
    const result = check(args);
    return result.valid ? undefined : result.errorMessage;
  };
}
