import type { Db } from "@/lib/db";
import { decideApproval } from "@/lib/approvals/decide-approval";

// A person's decision on a pending approval, for the demo history: the very function the API
// and the console call (compare-and-set, audit), so the demo's traces are the real thing.
export async function decideDemoApproval(options: {
  db: Db;
  tenantId: string;
  operationId: string;
  decision: "approve" | "reject";
  reason: string;
  actor: string;
}): Promise<void> {
  const { db, tenantId, operationId } = options;
  const approval = await db.approval.findFirstOrThrow({ where: { tenantId, operationId }, select: { id: true } });
  await decideApproval({ db, tenantId, approvalId: approval.id, input: { decision: options.decision, reason: options.reason }, actor: options.actor });
}
