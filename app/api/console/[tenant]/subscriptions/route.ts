import { z } from "zod";
import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { subscriptionNameSchema, subscriptionRequestSchema } from "@/lib/event-subscriptions/event-subscription-schemas";
import { putEventSubscription } from "@/lib/event-subscriptions/put-event-subscription";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// create: the "New subscription" form (refused if the name is taken); seenUpdatedAt: an edit of
// the subscription as the form showed it (refused if it changed since). Neither: create or replace, as the API's PUT.
const bodySchema = subscriptionRequestSchema
  .extend({ name: subscriptionNameSchema, create: z.literal(true).optional(), seenUpdatedAt: z.iso.datetime().optional() })
  .strict()
  .refine((b) => !(b.create && b.seenUpdatedAt), { message: "a form creates or edits, not both", path: ["seenUpdatedAt"] });

// POST /api/console/{tenant}/subscriptions – an admin creates or replaces an event subscription; a new secret is in this response only
export const POST = withConsoleUser<{ tenant: string }>({ route: "/api/console/{tenant}/subscriptions", capability: "administer" }, async ({ req, user, tenant }) => {
  const { name, create, seenUpdatedAt, ...input } = bodySchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
  const expect = create ? "create" : seenUpdatedAt !== undefined ? { updatedAt: seenUpdatedAt } : undefined;
  const { created, subscription, secret } = await putEventSubscription({ db: db(), tenantId: tenant.id, name, input, actor: `user:${user.email}`, admin: { id: user.id }, expect });
  return json({ ...subscription, ...(secret ? { secret } : {}) }, created ? 201 : 200, { "cache-control": "no-store" });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/subscriptions", ["POST"]);
