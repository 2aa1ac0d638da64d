import type { Db } from "@/lib/db";
import { newId } from "@/lib/crypto/ids";
import { recordAudit } from "@/lib/audit/record-audit";
import { ProblemError } from "@/lib/http/problem";
import { confirmActingAdmin } from "@/lib/users/acting-admin";
import type { ToolDefinition } from "@/lib/tools/tool-schema";
import { sealProbe } from "@/lib/probes/probe-headers";
import { toolView, type ToolRow, type ToolView } from "@/lib/tools/tool-view";
import { selectToolColumns } from "@/lib/tools/tool-columns";

// Creates or replaces a tool of the tenant. The upsert is one atomic statement (no
// check-then-insert); the row lock taken first only makes the audit's "before" exact.
export async function putTool(options: {
  db: Db;
  tenantId: string;
  name: string;
  definition: ToolDefinition;
  actor: string;
  // The console's signed-in admin, read again in the transaction (lib/users/acting-admin.ts).
  admin?: { id: string };
  // Why (the console asks; the API has no field for it).
  reason?: string | null;
  // False for an API key: lifting a tool's approval gate is a person's decision, in the console.
  mayLiftApproval?: boolean;
  // The console's form: the tool's updatedAt when the form was opened. The form sends the whole
  // definition as it showed it, so saving it over a change made since (another admin's approval
  // gate, a probe) would undo that change unseen: refused with 409 instead.
  seenUpdatedAt?: string;
}): Promise<{ created: boolean; tool: ToolView }> {
  const { db, tenantId, name, definition: d, actor } = options;
  return db.$transaction(async (tx) => {
    if (options.admin) await confirmActingAdmin(tx, { id: options.admin.id, tenantId });
    const before = await tx.$queryRaw<ToolRow[]>`
      SELECT ${selectToolColumns} FROM tool WHERE tenant_id = ${tenantId} AND name = ${name} FOR UPDATE`;
    const current = before[0];
    if (options.seenUpdatedAt !== undefined && current && current.updatedAt.toISOString() !== options.seenUpdatedAt) {
      throw new ProblemError(
        "invalid-state",
        `This tool was changed since you opened the form (at ${current.updatedAt.toISOString()}): close the form and open it again to edit the tool as it is now.`,
      );
    }
    // An admin key that also claims (the README's example) could otherwise approve its own
    // request after all: its approval is refused, but a PUT with "approval": "none" (or a whole
    // definition that leaves the field out) and a fresh key ran the tool with no second party.
    if (before[0]?.approval === "required" && d.policy.approval === "none" && options.mayLiftApproval === false) {
      throw new ProblemError("forbidden", 'This tool requires approval, and an API key cannot lift that: send "approval": "required", or ask an admin to change it in the console.');
    }
    // The probe's header values are stored sealed; "[redacted]" keeps the stored value (probe-headers.ts).
    const probe = d.policy.probe ? JSON.stringify(sealProbe(d.policy.probe, before[0]?.probe)) : null;
    const rows = await tx.$queryRaw<(ToolRow & { inserted: boolean })[]>`
      INSERT INTO tool (id, tenant_id, name, description, read_only_hint, destructive_hint, idempotent_hint, open_world_hint,
        lease_seconds, max_attempts, backoff_base_ms, backoff_cap_ms, takeover, approval, approval_ttl_seconds, result_retention_hours, probe)
      VALUES (${newId("tool")}, ${tenantId}, ${name}, ${d.description}, ${d.annotations.readOnlyHint}, ${d.annotations.destructiveHint},
        ${d.annotations.idempotentHint}, ${d.annotations.openWorldHint}, ${d.policy.leaseSeconds}, ${d.policy.maxAttempts},
        ${d.policy.backoff.baseMs}, ${d.policy.backoff.capMs}, ${d.policy.takeover}::takeover_policy, ${d.policy.approval}::approval_policy,
        ${d.policy.approvalTtlSeconds}, ${d.policy.resultRetentionHours}, ${probe}::jsonb)
      ON CONFLICT (tenant_id, name) DO UPDATE SET
        description = EXCLUDED.description, read_only_hint = EXCLUDED.read_only_hint, destructive_hint = EXCLUDED.destructive_hint,
        idempotent_hint = EXCLUDED.idempotent_hint, open_world_hint = EXCLUDED.open_world_hint, lease_seconds = EXCLUDED.lease_seconds,
        max_attempts = EXCLUDED.max_attempts, backoff_base_ms = EXCLUDED.backoff_base_ms, backoff_cap_ms = EXCLUDED.backoff_cap_ms,
        takeover = EXCLUDED.takeover, approval = EXCLUDED.approval, approval_ttl_seconds = EXCLUDED.approval_ttl_seconds,
        result_retention_hours = EXCLUDED.result_retention_hours, probe = EXCLUDED.probe, updated_at = now()
      RETURNING ${selectToolColumns}, (xmax = 0) AS inserted`;
    const row = rows[0];
    if (!row) throw new Error("tool upsert returned no row");
    const tool = toolView(row);
    const previous = before[0];
    await recordAudit(tx, {
      tenantId,
      actor,
      action: row.inserted ? "tool.created" : "tool.replaced",
      targetType: "tool",
      targetId: name,
      before: previous ? toolView(previous) : null,
      after: tool,
      reason: options.reason,
    });
    return { created: row.inserted, tool };
  });
}
