import { db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { getWebhookConnection } from "@/lib/webhooks/get-webhook-connection";
import { putWebhookConnection } from "@/lib/webhooks/put-webhook-connection";
import { requestOrigin } from "@/lib/http/request-origin";
import { connectionNameSchema, webhookConnectionRequestSchema } from "@/lib/webhooks/webhook-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";
import { parsePathName } from "@/lib/http/path-params";

export const dynamic = "force-dynamic";

const route = "/api/v1/webhook-connections/{name}";

// PUT /api/v1/webhook-connections/{name} – create (201) or replace (200) a provider's webhook connection
export const PUT = withApiKey<{ name: string }>({ route, roles: ["admin"], tenantWide: true, params: { name: null } }, async ({ req, key, params, ctx }) => {
  const name = parsePathName(connectionNameSchema, params.name);
  ctx.annotate({ webhookConnection: name });
  const input = webhookConnectionRequestSchema.parse(await readJson(req, { maxBytes: 64 * KiB }));
  const { created, connection } = await putWebhookConnection({
    db: db(),
    tenantId: key.tenantId,
    name,
    input,
    actor: `api-key:${key.id}`,
    origin: requestOrigin(req),
  });
  return json(connection, created ? 201 : 200, created ? { location: `/api/v1/webhook-connections/${name}` } : {});
});

// GET /api/v1/webhook-connections/{name} – one connection of the key's tenant (never its secrets)
export const GET = withApiKey<{ name: string }>({ route, roles: ["admin"], tenantWide: true, params: { name: null } }, async ({ req, key, params }) => {
  const connection = await getWebhookConnection({ db: db(), tenantId: key.tenantId, name: parsePathName(connectionNameSchema, params.name), origin: requestOrigin(req) });
  if (!connection) throw new ProblemError("webhook-connection-not-found", "No webhook connection of that name exists in this tenant.");
  return json(connection);
});

export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/webhook-connections/{name}", ["GET", "PUT"]);
