import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db";

// Why a delivery cannot be redelivered as its subscription stands, on the same conditions as
// tollgate_redeliver (prisma/migrations/20261202190000_redeliver_own_subscription_only), in its
// order: the subscription was removed; the delivery was made for an earlier subscription of the
// name (removed, then put again: the same row, created_at set anew); the subscription no longer
// subscribes to the event's type. null: it can be (once it is delivered or dead).
export type RedeliverBlock = "subscription-removed" | "earlier-subscription" | "not-subscribed";

export type DeliveryListItem = {
  id: string;
  eventId: string;
  type: string;
  subscription: string;
  // Why Redeliver would be refused (no button), or null.
  redeliverBlock: RedeliverBlock | null;
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
// subscription's, optionally one state), newest first. Only the operation's id is read from the
// event's payload, in SQL: the payload itself (up to 256 KiB) stays in the database.
export async function listDeliveries(options: {
  db: Db;
  tenantId: string;
  state?: "pending" | "delivered" | "dead";
  subscription?: string;
  limit?: number;
}): Promise<DeliveryListItem[]> {
  const { db, tenantId } = options;
  const rows = await db.$queryRaw<DeliveryListItem[]>`
    SELECT d.id, d.event_id AS "eventId", e.type, s.name AS subscription,
      tollgate_redeliver_block(d, s, e.type) AS "redeliverBlock",
      d.state::text AS state, d.attempts, d.last_status AS "lastStatus", d.last_error AS "lastError", d.last_attempt_at AS "lastAttemptAt",
      d.next_attempt_at AS "nextAttemptAt", d.delivered_at AS "deliveredAt", d.dead_at AS "deadAt", d.created_at AS "createdAt",
      -- As the payload's operation.operationId ?? approval.operationId ?? webhookEvent.operationId
      -- read in JavaScript: the first one present and not null, kept only when it is a string.
      CASE WHEN jsonb_typeof(o.id) = 'string' THEN o.id #>> '{}' END AS "operationId"
    FROM event_delivery d
      JOIN outbox_event e ON e.id = d.event_id
      JOIN event_subscription s ON s.id = d.subscription_id
      CROSS JOIN LATERAL (SELECT coalesce(nullif(e.payload -> 'operation' -> 'operationId', 'null'), nullif(e.payload -> 'approval' -> 'operationId', 'null'),
        nullif(e.payload -> 'webhookEvent' -> 'operationId', 'null')) AS id) o
    WHERE d.tenant_id = ${tenantId}
      ${options.state ? Prisma.sql`AND d.state = ${options.state}::delivery_state` : Prisma.empty}
      ${options.subscription !== undefined ? Prisma.sql`AND s.name = ${options.subscription}` : Prisma.empty}
    ORDER BY d.created_at DESC, d.id DESC
    LIMIT ${options.limit ?? 50}`;
  return rows;
}

export async function countDeliveries(options: { db: Db; tenantId: string }): Promise<Record<"pending" | "delivered" | "dead", number>> {
  const groups = await options.db.eventDelivery.groupBy({ by: ["state"], where: { tenantId: options.tenantId }, _count: { _all: true } });
  const counts = { pending: 0, delivered: 0, dead: 0 };
  for (const g of groups) counts[g.state] = g._count._all;
  return counts;
}
