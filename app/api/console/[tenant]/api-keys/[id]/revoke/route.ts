import { z } from "zod";
import { db } from "@/lib/db";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { ProblemError } from "@/lib/http/problem";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

const revokeSchema = z.object({ reason: z.string().trim().min(1, "say why the key is revoked").max(2000) }).strict();

// POST /api/console/{tenant}/api-keys/{id}/revoke – an admin revokes a key of this tenant (another tenant's key: 404)
export const POST = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/api-keys/{id}/revoke", capability: "administer" },
  async ({ req, user, tenant, params, ctx }) => {
    ctx.annotate({ apiKeyId: params.id });
    const { reason } = revokeSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    const key = await revokeApiKey({ db: db(), id: params.id, tenantId: tenant.id, actor: `user:${user.email}`, reason });
    if (!key) throw new ProblemError("not-found", "No API key with this id in this tenant.");
    return json({ key });
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/api-keys/{id}/revoke", ["POST"]);
