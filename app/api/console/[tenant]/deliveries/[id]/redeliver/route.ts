import { db } from "@/lib/db";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { redeliver } from "@/lib/outbox/redeliver";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/deliveries/{id}/redeliver – an admin sends a dead (or delivered) event delivery again, same webhook-id
export const POST = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/deliveries/{id}/redeliver", capability: "administer" },
  async ({ user, tenant, params, ctx }) => {
    ctx.annotate({ deliveryId: params.id });
    const { previousState } = await redeliver({ db: db(), tenantId: tenant.id, deliveryId: params.id, actor: `user:${user.email}` });
    return json({ id: params.id, state: "pending", previousState });
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/deliveries/{id}/redeliver", ["POST"]);
