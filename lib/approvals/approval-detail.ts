import type { Db } from "@/lib/db";
import type { ApprovalView } from "@/lib/approvals/approval-schemas";
import { getApproval } from "@/lib/approvals/list-approvals";
import { findDuplicateIntents, type DuplicateIntent } from "@/lib/approvals/duplicate-intents";

export type ApprovalDetail = {
  approval: ApprovalView;
  tool: { name: string; description: string; destructive: boolean; openWorld: boolean; idempotent: boolean; readOnly: boolean } | null;
  duplicates: DuplicateIntent[];
  now: number;
};

// Everything the approval page shows, read in one parallel wave.
export async function getApprovalDetail(options: { db: Db; tenantId: string; approvalId: string }): Promise<ApprovalDetail | null> {
  const approval = await getApproval(options);
  if (!approval) return null;
  const [tool, duplicates] = await Promise.all([
    options.db.tool.findFirst({ where: { tenantId: options.tenantId, name: approval.tool } }),
    findDuplicateIntents({ db: options.db, tenantId: options.tenantId, operationId: approval.operationId }),
  ]);
  return {
    approval,
    tool: tool
      ? { name: tool.name, description: tool.description, destructive: tool.destructiveHint, openWorld: tool.openWorldHint, idempotent: tool.idempotentHint, readOnly: tool.readOnlyHint }
      : null,
    duplicates,
    now: Date.now(),
  };
}
