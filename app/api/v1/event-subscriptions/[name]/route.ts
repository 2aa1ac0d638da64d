import { db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { subscriptionNameSchema, subscriptionRequestSchema } from "@/lib/event-subscriptions/event-subscription-schemas";
import { getEventSubscription } from "@/lib/event-subscriptions/get-event-subscription";
import { putEventSubscription } from "@/lib/event-subscriptions/put-event-subscription";
import { removeEventSubscription } from "@/lib/event-subscriptions/remove-event-subscription";
import { otherMethods } from "@/lib/http/method-not-allowed";
import { parsePathName } from "@/lib/http/path-params";

export const dynamic = "force-dynamic";

const route = "/api/v1/event-subscriptions/{name}";

// PUT /api/v1/event-subscriptions/{name} – create (201, with the signing secret once) or replace (200)
export const PUT = withApiKey<{ name: string }>({ route, roles: ["admin"], tenantWide: true, params: { name: null } }, async ({ req, key, params, ctx }) => {
  const name = parsePathName(subscriptionNameSchema, params.name);
  ctx.annotate({ subscription: name });
  const input = subscriptionRequestSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
  const { created, subscription, secret } = await putEventSubscription({ db: db(), tenantId: key.tenantId, name, input, actor: `api-key:${key.id}` });
  const headers: Record<string, string> = { "cache-control": "no-store" };
  if (created) headers.location = `/api/v1/event-subscriptions/${name}`;
  return json({ ...subscription, ...(secret ? { secret } : {}) }, created ? 201 : 200, headers);
});

// GET /api/v1/event-subscriptions/{name} – one subscription (its secret is never shown again)
export const GET = withApiKey<{ name: string }>({ route, roles: ["admin"], tenantWide: true, params: { name: null } }, async ({ key, params }) => {
  const subscription = await getEventSubscription({ db: db(), tenantId: key.tenantId, name: parsePathName(subscriptionNameSchema, params.name) });
  if (!subscription) throw new ProblemError("subscription-not-found", "No event subscription of that name exists in this tenant.");
  return json(subscription);
});

// DELETE /api/v1/event-subscriptions/{name} – stop deliveries to it (history is kept)
export const DELETE = withApiKey<{ name: string }>({ route, roles: ["admin"], tenantWide: true, params: { name: null } }, async ({ key, params }) => {
  const removed = await removeEventSubscription({ db: db(), tenantId: key.tenantId, name: parsePathName(subscriptionNameSchema, params.name), actor: `api-key:${key.id}` });
  if (!removed) throw new ProblemError("subscription-not-found", "No event subscription of that name exists in this tenant.");
  return new Response(null, { status: 204 });
});

export const { POST, PATCH, OPTIONS } = otherMethods("/api/v1/event-subscriptions/{name}", ["GET", "PUT", "DELETE"]);
