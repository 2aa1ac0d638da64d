import type { Db } from "@/lib/db";
import { recordAudit } from "@/lib/audit/record-audit";

// Turns a subscription off (its row and delivery history stay). Its pending deliveries die with it,
// in the same transaction: they showed "pending, next try in …" for up to two hours after the
// subscription was gone (newcomer review); the worker's job for one finds it dead and skips it.
// A later PUT of the same name turns the subscription on again (not its dead deliveries).
export async function removeEventSubscription(options: { db: Db; tenantId: string; name: string; actor: string }): Promise<boolean> {
  const { db, tenantId, name, actor } = options;
  return db.$transaction(async (tx) => {
    const n = await tx.$executeRaw`
      UPDATE event_subscription SET disabled_at = now(), updated_at = now()
      WHERE tenant_id = ${tenantId} AND name = ${name} AND disabled_at IS NULL`;
    if (n === 0) return false;
    await tx.$executeRaw`
      UPDATE event_delivery SET state = 'dead', dead_at = now(), next_attempt_at = NULL, last_error = 'the subscription was removed'
      WHERE tenant_id = ${tenantId} AND state = 'pending'
        AND subscription_id = (SELECT id FROM event_subscription WHERE tenant_id = ${tenantId} AND name = ${name})`;
    await recordAudit(tx, { tenantId, actor, action: "event_subscription.removed", targetType: "event_subscription", targetId: name });
    return true;
  });
}
