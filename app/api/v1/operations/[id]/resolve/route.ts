import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { resolveOperation } from "@/lib/operations/resolve-operation";
import { resolveRequestSchema } from "@/lib/operations/operation-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/v1/operations/{id}/resolve – an operator settles an unknown outcome
export const POST = withApiKey<{ id: string }>(
  { route: "/api/v1/operations/{id}/resolve", roles: ["admin"], params: { id: "operation-not-found" } },
  async ({ req, key, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const input = resolveRequestSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    const view = await resolveOperation({
      db: db(),
      tenantId: key.tenantId,
      operationId: params.id,
      input,
      actor: `api-key:${key.id}`,
    });
    return json(view);
  },
);

export const { GET, PUT, PATCH, DELETE } = otherMethods("/api/v1/operations/{id}/resolve", ["POST"]);
