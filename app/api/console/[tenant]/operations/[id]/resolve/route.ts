import { db } from "@/lib/db";
import { readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { resolveOperation } from "@/lib/operations/resolve-operation";
import { consoleResolveRequestSchema } from "@/lib/console/resolve-many";
import { RESOLVE_BODY_MAX_BYTES } from "@/lib/operations/operation-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/operations/{id}/resolve – an operator settles one unknown outcome
export const POST = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/operations/{id}/resolve", capability: "resolve" },
  async ({ req, user, tenant, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const { seenAttempts, seenFlaggedAt, ...input } = consoleResolveRequestSchema.parse(await readJson(req, { maxBytes: RESOLVE_BODY_MAX_BYTES }));
    const view = await resolveOperation({
      db: db(),
      tenantId: tenant.id,
      operationId: params.id,
      input,
      actor: `user:${user.email}`,
      via: "operator",
      seenAttempts,
      seenFlaggedAt,
      annotate: ctx.annotate,
    });
    return json(view);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/operations/{id}/resolve", ["POST"]);
