import type { Db } from "@/lib/db";

export type DeliveryListItem = {
  id: string;
  eventId: string;
  type: string;
  subscription: string;
  // The subscription was removed: nothing can be delivered to it (no redeliver).
  subscriptionRemoved: boolean;
  state: "pending" | "delivered" | "dead";
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  deadAt: Date | null;
  createdAt: Date;
  operationId: string | null;
};

// The console's delivery lists: the newest deliveries of the tenant (optionally one
// subscription's, optionally one state), newest first.
export async function listDeliveries(options: {
  db: Db;
  tenantId: string;
  state?: "pending" | "delivered" | "dead";
  subscription?: string;
  limit?: number;
}): Promise<DeliveryListItem[]> {
  const { db, tenantId } = options;
  const rows = await db.eventDelivery.findMany({
    where: {
      tenantId,
      ...(options.state ? { state: options.state } : {}),
      ...(options.subscription ? { subscription: { name: options.subscription } } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: options.limit ?? 50,
    include: { event: { select: { type: true, payload: true } }, subscription: { select: { name: true, disabledAt: true } } },
  });
  return rows.map((d) => ({
    id: d.id,
    eventId: d.eventId,
    type: d.event.type,
    subscription: d.subscription.name,
    subscriptionRemoved: d.subscription.disabledAt !== null,
    state: d.state,
    attempts: d.attempts,
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    lastAttemptAt: d.lastAttemptAt,
    nextAttemptAt: d.nextAttemptAt,
    deliveredAt: d.deliveredAt,
    deadAt: d.deadAt,
    createdAt: d.createdAt,
    operationId: operationIdOf(d.event.payload),
  }));
}

export async function countDeliveries(options: { db: Db; tenantId: string }): Promise<Record<"pending" | "delivered" | "dead", number>> {
  const groups = await options.db.eventDelivery.groupBy({ by: ["state"], where: { tenantId: options.tenantId }, _count: { _all: true } });
  const counts = { pending: 0, delivered: 0, dead: 0 };
  for (const g of groups) counts[g.state] = g._count._all;
  return counts;
}

function operationIdOf(payload: unknown): string | null {
  const p = payload as { operation?: { operationId?: unknown }; approval?: { operationId?: unknown }; webhookEvent?: { operationId?: unknown } } | null;
  const id = p?.operation?.operationId ?? p?.approval?.operationId ?? p?.webhookEvent?.operationId;
  return typeof id === "string" ? id : null;
}
