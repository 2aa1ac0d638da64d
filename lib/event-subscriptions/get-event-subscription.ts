import type { Db } from "@/lib/db";
import { subscriptionView, type SubscriptionRow } from "@/lib/event-subscriptions/subscription-view";
import type { SubscriptionView } from "@/lib/event-subscriptions/event-subscription-schemas";

const columns = { name: true, url: true, events: true, createdAt: true, updatedAt: true } as const;

// Active subscriptions only: a disabled one delivers nothing and is not shown.
export async function getEventSubscription(options: { db: Db; tenantId: string; name: string }): Promise<SubscriptionView | null> {
  const row: SubscriptionRow | null = await options.db.eventSubscription.findFirst({
    where: { tenantId: options.tenantId, name: options.name, disabledAt: null },
    select: columns,
  });
  return row ? subscriptionView(row) : null;
}

export async function listEventSubscriptions(options: { db: Db; tenantId: string }): Promise<SubscriptionView[]> {
  const rows = await options.db.eventSubscription.findMany({
    where: { tenantId: options.tenantId, disabledAt: null },
    select: columns,
    orderBy: { name: "asc" },
  });
  return rows.map(subscriptionView);
}
