import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { clearFlag, clearFlagSchema } from "@/lib/operations/clear-flag";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/operations/{id}/clear-flag – an operator who checked takes the flag down
export const POST = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/operations/{id}/clear-flag", capability: "resolve" },
  async ({ req, user, tenant, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const input = clearFlagSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    await clearFlag({ db: db(), tenantId: tenant.id, operationId: params.id, input, actor: `user:${user.email}` });
    return json({ cleared: true });
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/operations/{id}/clear-flag", ["POST"]);
