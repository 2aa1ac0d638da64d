import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { heartbeatOperation } from "@/lib/operations/heartbeat-operation";
import { heartbeatRequestSchema } from "@/lib/operations/operation-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/v1/operations/{id}/heartbeat – extend the lease while the work goes on
export const POST = withApiKey<{ id: string }>(
  { route: "/api/v1/operations/{id}/heartbeat", roles: ["agent", "admin"], params: { id: "operation-not-found" }, hotPath: true },
  async ({ req, key, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const input = heartbeatRequestSchema.parse(await readJson(req, { maxBytes: 4 * KiB }));
    return json(await heartbeatOperation({ db: db(), key, operationId: params.id, fencingToken: input.fencingToken, annotate: ctx.annotate }));
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/operations/{id}/heartbeat", ["POST"]);
