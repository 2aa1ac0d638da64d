import type { Db } from "@/lib/db";

// A person's decision on a pending approval, for the demo history only: approve → the operation
// becomes pending (the agent's next claim starts attempt 1), reject → rejected, with the same
// audit event shape as the SQL functions write. When the approvals API lands
// (POST /api/v1/approvals/{id}/decision), the seed should call its lib function instead.
export async function decideDemoApproval(options: {
  db: Db;
  tenantId: string;
  operationId: string;
  decision: "approve" | "reject";
  reason: string;
  actor: string;
}): Promise<void> {
  const { db, tenantId, operationId, reason, actor } = options;
  const approved = options.decision === "approve";
  const n = await db.$executeRaw`
    WITH a AS (
      UPDATE approval SET state = ${approved ? "approved" : "rejected"}::approval_state, decided_by = ${actor}, decided_at = now(), reason = ${reason}
      WHERE tenant_id = ${tenantId} AND operation_id = ${operationId} AND state = 'pending' AND expires_at > now()
      RETURNING id
    ), o AS (
      UPDATE operation o SET updated_at = now(),
        state = ${approved ? "pending" : "rejected"}::operation_state,
        completed_at = CASE WHEN ${approved} THEN NULL ELSE now() END,
        error = CASE WHEN ${approved} THEN NULL ELSE jsonb_build_object('code', 'approval-rejected', 'message', ${reason}::text) END,
        result_expires_at = CASE WHEN ${approved} THEN NULL ELSE now() + make_interval(hours => t.result_retention_hours) END
      FROM tool t, a
      WHERE o.id = ${operationId} AND o.tenant_id = ${tenantId} AND o.state = 'awaiting_approval' AND t.tenant_id = o.tenant_id AND t.name = o.tool
      RETURNING o.id, o.state
    )
    INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
    SELECT ${tenantId}, ${actor}, ${approved ? "approval.approved" : "approval.rejected"}, 'operation', o.id,
      jsonb_build_object('state', 'awaiting_approval'), jsonb_build_object('state', o.state, 'approvalId', a.id), ${reason}
    FROM a, o`;
  if (n !== 1) throw new Error(`demo seed: the approval of ${operationId} was not pending`);
}
