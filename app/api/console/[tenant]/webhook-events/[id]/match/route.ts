import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { matchWebhookEvent } from "@/lib/webhooks/match-webhook-event";
import { matchEventRequestSchema } from "@/lib/webhooks/webhook-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/webhook-events/{id}/match – an operator ties an inbox event to an operation with an outcome
export const POST = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/webhook-events/{id}/match", capability: "match-webhooks" },
  async ({ req, user, tenant, params, ctx }) => {
    ctx.annotate({ webhookEventId: params.id });
    const input = matchEventRequestSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    ctx.annotate({ operationId: input.operationId });
    const view = await matchWebhookEvent({ db: db(), tenantId: tenant.id, eventId: params.id, input, actor: `user:${user.email}` });
    return json(view);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/webhook-events/{id}/match", ["POST"]);
