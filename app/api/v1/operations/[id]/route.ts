import { db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { getOperation } from "@/lib/operations/get-operation";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/v1/operations/{id} – the operation's status view
export const GET = withApiKey<{ id: string }>(
  { route: "/api/v1/operations/{id}", roles: ["agent", "approver", "admin"], params: { id: "operation-not-found" } },
  async ({ key, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const view = await getOperation({ db: db(), tenantId: key.tenantId, tools: key.tools, operationId: params.id, annotate: ctx.annotate });
    if (!view) throw new ProblemError("operation-not-found", "No operation with this id exists in your tenant (for this key's tools).");
    return json(view);
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/operations/{id}", ["GET"]);
