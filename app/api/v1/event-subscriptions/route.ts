import { db } from "@/lib/db";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { listEventSubscriptions } from "@/lib/event-subscriptions/get-event-subscription";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/v1/event-subscriptions – the tenant's active subscriptions (never their secrets)
export const GET = withApiKey({ route: "/api/v1/event-subscriptions", roles: ["admin"], tenantWide: true }, async ({ key }) =>
  json({ subscriptions: await listEventSubscriptions({ db: db(), tenantId: key.tenantId }) }),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/event-subscriptions", ["GET"]);
