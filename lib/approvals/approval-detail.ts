import type { Db } from "@/lib/db";
import type { ApprovalView } from "@/lib/approvals/approval-schemas";
import { getApproval } from "@/lib/approvals/list-approvals";
import { findDuplicateIntents, type DuplicateIntent } from "@/lib/approvals/duplicate-intents";

export type ApprovalDetail = {
  approval: ApprovalView;
  tool: { name: string; description: string; destructive: boolean; openWorld: boolean; idempotent: boolean; readOnly: boolean } | null;
  duplicates: DuplicateIntent[];
  // The operation's flag, if evidence about it disagrees with it: a provider's event about an
  // operation awaiting approval says something happened without an attempt. The approver sees it.
  flag: { at: string; reason: string } | null;
  now: number;
};

// Everything the approval page shows, read in one parallel wave.
export async function getApprovalDetail(options: { db: Db; tenantId: string; approvalId: string }): Promise<ApprovalDetail | null> {
  const approval = await getApproval(options);
  if (!approval) return null;
  const [tool, duplicates, op] = await Promise.all([
    options.db.tool.findFirst({ where: { tenantId: options.tenantId, name: approval.tool } }),
    findDuplicateIntents({ db: options.db, tenantId: options.tenantId, operationId: approval.operationId }),
    options.db.operation.findFirst({ where: { tenantId: options.tenantId, id: approval.operationId }, select: { flaggedAt: true, flagReason: true } }),
  ]);
  return {
    approval,
    tool: tool
      ? { name: tool.name, description: tool.description, destructive: tool.destructiveHint, openWorld: tool.openWorldHint, idempotent: tool.idempotentHint, readOnly: tool.readOnlyHint }
      : null,
    duplicates,
    flag: op?.flaggedAt ? { at: op.flaggedAt.toISOString(), reason: op.flagReason ?? "" } : null,
    now: Date.now(),
  };
}
