import { z } from "zod";
import { probeView } from "@/lib/probes/probe-headers";
import { toolAnnotationsSchema, toolPolicySchema } from "@/lib/tools/tool-schema";

export type ToolRow = {
  name: string;
  description: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
  leaseSeconds: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  takeover: "never" | "deduplicated";
  approval: "none" | "required";
  approvalTtlSeconds: number;
  resultRetentionHours: number;
  probe: unknown;
  createdAt: Date;
  updatedAt: Date;
};

export const toolViewSchema = z.object({
  name: z.string(),
  description: z.string(),
  annotations: toolAnnotationsSchema.required(),
  policy: toolPolicySchema.required(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type ToolView = z.infer<typeof toolViewSchema>;

export function toolView(row: ToolRow): ToolView {
  return {
    name: row.name,
    description: row.description,
    annotations: {
      readOnlyHint: row.readOnlyHint,
      destructiveHint: row.destructiveHint,
      idempotentHint: row.idempotentHint,
      openWorldHint: row.openWorldHint,
    },
    policy: {
      leaseSeconds: row.leaseSeconds,
      maxAttempts: row.maxAttempts,
      backoff: { baseMs: row.backoffBaseMs, capMs: row.backoffCapMs },
      takeover: row.takeover,
      approval: row.approval,
      approvalTtlSeconds: row.approvalTtlSeconds,
      resultRetentionHours: row.resultRetentionHours,
      // Header values never leave the database (API, console, audit log): names only.
      probe: probeView(row.probe) as ToolView["policy"]["probe"],
    },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
