import type { EventType, SubscriptionView } from "@/lib/event-subscriptions/event-subscription-schemas";

export type SubscriptionRow = { name: string; url: string; events: string[]; createdAt: Date; updatedAt: Date };

// Never the secret: it is shown once, in the response that made it.
export function subscriptionView(row: SubscriptionRow): SubscriptionView {
  return {
    name: row.name,
    url: row.url,
    events: row.events as EventType[],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
