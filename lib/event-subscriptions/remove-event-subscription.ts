import type { Db } from "@/lib/db";
import { recordAudit } from "@/lib/audit/record-audit";

// Turns a subscription off (its row and delivery history stay; pending deliveries to it are
// marked dead by the worker instead of sent). A later PUT of the same name turns it on again.
export async function removeEventSubscription(options: { db: Db; tenantId: string; name: string; actor: string }): Promise<boolean> {
  const { db, tenantId, name, actor } = options;
  return db.$transaction(async (tx) => {
    const n = await tx.$executeRaw`
      UPDATE event_subscription SET disabled_at = now(), updated_at = now()
      WHERE tenant_id = ${tenantId} AND name = ${name} AND disabled_at IS NULL`;
    if (n === 0) return false;
    await recordAudit(tx, { tenantId, actor, action: "event_subscription.removed", targetType: "event_subscription", targetId: name });
    return true;
  });
}
