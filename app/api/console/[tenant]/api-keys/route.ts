import { db } from "@/lib/db";
import { apiKeyInputSchema, createApiKey } from "@/lib/api-keys/create-api-key";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/api-keys – an admin creates a key; the secret is in this response and nowhere else
export const POST = withConsoleUser<{ tenant: string }>({ route: "/api/console/{tenant}/api-keys", capability: "administer" }, async ({ req, user, tenant }) => {
  const input = apiKeyInputSchema.strict().parse(await readJson(req, { maxBytes: 16 * KiB }));
  const { key, secret } = await createApiKey({ db: db(), tenantId: tenant.id, input, actor: `user:${user.email}`, admin: { id: user.id } });
  return json({ key, secret }, 201, { "cache-control": "no-store" });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/api-keys", ["POST"]);
