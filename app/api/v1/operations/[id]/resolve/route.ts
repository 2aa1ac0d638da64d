import { db } from "@/lib/db";
import { readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { resolveOperation } from "@/lib/operations/resolve-operation";
import { getOperation } from "@/lib/operations/get-operation";
import { ProblemError } from "@/lib/http/problem";
import { RESOLVE_BODY_MAX_BYTES, resolveRequestSchema } from "@/lib/operations/operation-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/v1/operations/{id}/resolve – an operator settles an unknown outcome
export const POST = withApiKey<{ id: string }>(
  { route: "/api/v1/operations/{id}/resolve", roles: ["admin"], params: { id: "operation-not-found" } },
  async ({ req, key, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const input = resolveRequestSchema.parse(await readJson(req, { maxBytes: RESOLVE_BODY_MAX_BYTES }));
    // A key limited to some tools cannot read another tool's operation (404), so it cannot settle
    // one either. An operation's tool never changes, so reading it first leaves no race.
    if (key.tools.length > 0 && !(await getOperation({ db: db(), tenantId: key.tenantId, tools: key.tools, operationId: params.id }))) {
      throw new ProblemError("operation-not-found", "No operation with this id exists in your tenant (for this key's tools).");
    }
    const view = await resolveOperation({
      db: db(),
      tenantId: key.tenantId,
      operationId: params.id,
      input,
      actor: `api-key:${key.id}`,
      annotate: ctx.annotate,
    });
    return json(view);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/operations/{id}/resolve", ["POST"]);
