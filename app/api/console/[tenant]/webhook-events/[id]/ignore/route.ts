import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { ignoreWebhookEvent } from "@/lib/webhooks/ignore-webhook-event";
import { ignoreEventRequestSchema } from "@/lib/webhooks/webhook-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/webhook-events/{id}/ignore – an operator sets an inbox event aside, with a reason
export const POST = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/webhook-events/{id}/ignore", capability: "match-webhooks" },
  async ({ req, user, tenant, params, ctx }) => {
    ctx.annotate({ webhookEventId: params.id });
    const input = ignoreEventRequestSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    const result = await ignoreWebhookEvent({ db: db(), tenantId: tenant.id, eventId: params.id, reason: input.reason, actor: `user:${user.email}` });
    return json(result);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/webhook-events/{id}/ignore", ["POST"]);
