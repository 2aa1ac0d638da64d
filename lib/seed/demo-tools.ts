import type { ToolDefinition } from "@/lib/tools/tool-schema";
import { toolDefinitionSchema } from "@/lib/tools/tool-schema";

// Three tools with different policies, so a newcomer sees each path of the protocol.
export const demoTools: Record<string, ToolDefinition> = {
  // Opening a ticket twice is annoying, not dangerous; the provider does not dedupe, so an
  // expired lease means "unknown" and a person checks.
  "tickets.create": toolDefinitionSchema.parse({
    description: "Open a support ticket",
    annotations: { destructiveHint: false, openWorldHint: true },
    policy: { leaseSeconds: 30, maxAttempts: 3, takeover: "never", resultRetentionHours: 168 },
  }),
  // The payment provider dedupes on the downstream key, so another worker may take over.
  "payments.charge": toolDefinitionSchema.parse({
    description: "Charge a customer's card",
    annotations: { destructiveHint: true, openWorldHint: true },
    policy: { leaseSeconds: 60, maxAttempts: 5, backoff: { baseMs: 500, capMs: 30000 }, takeover: "deduplicated", resultRetentionHours: 72 },
  }),
  // Deploys need a person's yes to these exact parameters.
  "deploy.production": toolDefinitionSchema.parse({
    description: "Deploy a service to production",
    annotations: { destructiveHint: true, openWorldHint: false },
    policy: { leaseSeconds: 600, maxAttempts: 1, takeover: "never", approval: "required", approvalTtlSeconds: 3600 },
  }),
};
