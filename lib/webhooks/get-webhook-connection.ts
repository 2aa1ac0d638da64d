import type { Db } from "@/lib/db";
import { webhookConnectionView, type WebhookConnectionRow } from "@/lib/webhooks/webhook-connection-view";
import type { WebhookConnectionView } from "@/lib/webhooks/webhook-schemas";

// One connection of the tenant by name, or null (another tenant's is as absent as a missing one).
export async function getWebhookConnection(options: { db: Db; tenantId: string; name: string; origin: string }): Promise<WebhookConnectionView | null> {
  const rows = await options.db.$queryRaw<WebhookConnectionRow[]>`
    SELECT * FROM webhook_connection WHERE tenant_id = ${options.tenantId} AND name = ${options.name}`;
  const row = rows[0];
  return row ? webhookConnectionView(row, options.origin) : null;
}
