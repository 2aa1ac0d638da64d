import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { subscriptionNameSchema, subscriptionRequestSchema } from "@/lib/event-subscriptions/event-subscription-schemas";
import { putEventSubscription } from "@/lib/event-subscriptions/put-event-subscription";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

const bodySchema = subscriptionRequestSchema.extend({ name: subscriptionNameSchema }).strict();

// POST /api/console/{tenant}/subscriptions – an admin creates or replaces an event subscription; a new secret is in this response only
export const POST = withConsoleUser<{ tenant: string }>({ route: "/api/console/{tenant}/subscriptions", capability: "administer" }, async ({ req, user, tenant }) => {
  const { name, ...input } = bodySchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
  const { created, subscription, secret } = await putEventSubscription({ db: db(), tenantId: tenant.id, name, input, actor: `user:${user.email}`, admin: { id: user.id } });
  return json({ ...subscription, ...(secret ? { secret } : {}) }, created ? 201 : 200, { "cache-control": "no-store" });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/subscriptions", ["POST"]);
