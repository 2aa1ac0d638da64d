import { z } from "zod";
import { probeSchema } from "@/lib/probes/probe-schema";
import { lowercaseNameSchema } from "@/lib/http/lowercase-name";

export const toolNameSchema = lowercaseNameSchema;

// Messages a person reads beside the console's field (zod's own: "Too small: expected number to be >=1").
const int = (min: number, max: number) =>
  z
    .number({ error: (issue) => (issue.input === null ? "Required: enter a whole number" : "must be a whole number") })
    .int("must be a whole number")
    .min(min, `must be at least ${min.toLocaleString("en-US")}`)
    .max(max, `must be at most ${max.toLocaleString("en-US")}`);

// Annotations default to MCP's: a tool is assumed destructive, non-idempotent and open-world
// unless its owner says otherwise.
export const toolAnnotationsSchema = z
  .object({
    readOnlyHint: z.boolean().default(false),
    destructiveHint: z.boolean().default(true),
    idempotentHint: z.boolean().default(false),
    openWorldHint: z.boolean().default(true),
  })
  .strict();

export const toolPolicySchema = z
  .object({
    leaseSeconds: int(1, 3600).default(30),
    maxAttempts: int(1, 20).default(3),
    backoff: z
      .object({ baseMs: int(1, 3_600_000).default(1000), capMs: int(1, 86_400_000).default(60_000) })
      .strict()
      .prefault({})
      .refine((b) => b.capMs >= b.baseMs, { message: "must be at least the first delay (baseMs)", path: ["capMs"] }),
    takeover: z.enum(["never", "deduplicated"]).default("never"),
    approval: z.enum(["none", "required"]).default("none"),
    approvalTtlSeconds: int(60, 30 * 86_400).default(86_400),
    resultRetentionHours: int(1, 2160).default(24),
    // Optional read-only status check the worker runs for this tool's unknown operations (lib/probes).
    probe: probeSchema.nullable().default(null),
  })
  .strict();

// PUT /api/v1/tools/{name} body. Unknown fields are refused so a typo in a policy name
// (say "leaseSecond") is an error, not a silently ignored setting.
export const toolDefinitionSchema = z
  .object({
    description: z.string().max(2000).default(""),
    annotations: toolAnnotationsSchema.prefault({}),
    policy: toolPolicySchema.prefault({}),
  })
  .strict();

export type ToolDefinition = z.infer<typeof toolDefinitionSchema>;
export type ToolPolicy = ToolDefinition["policy"];
