import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { completeOperation } from "@/lib/operations/complete-operation";
import { completeRequestSchema } from "@/lib/operations/operation-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/v1/operations/{id}/complete – the lease holder reports the outcome
export const POST = withApiKey<{ id: string }>(
  { route: "/api/v1/operations/{id}/complete", roles: ["agent", "admin"], params: { id: "operation-not-found" }, hotPath: true },
  async ({ req, key, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const input = completeRequestSchema.parse(await readJson(req, { maxBytes: 256 * KiB }));
    ctx.annotate({ outcome: input.outcome });
    const { view } = await completeOperation({ db: db(), key, operationId: params.id, input, annotate: ctx.annotate });
    return json(view);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/operations/{id}/complete", ["POST"]);
