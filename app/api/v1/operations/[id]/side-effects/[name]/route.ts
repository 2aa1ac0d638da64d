import { db } from "@/lib/db";
import { env } from "@/lib/env";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { recordSideEffect } from "@/lib/side-effects/record-side-effect";
import { sideEffectNameSchema, sideEffectRequestSchema } from "@/lib/side-effects/side-effect-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";
import { parsePathName } from "@/lib/http/path-params";

export const dynamic = "force-dynamic";

// PUT /api/v1/operations/{id}/side-effects/{name} – the lease holder records a provider call (intent first)
export const PUT = withApiKey<{ id: string; name: string }>(
  { route: "/api/v1/operations/{id}/side-effects/{name}", roles: ["agent", "admin"], hotPath: true, params: { id: "operation-not-found", name: null } },
  async ({ req, key, params, ctx }) => {
    ctx.annotate({ operationId: params.id });
    const name = parsePathName(sideEffectNameSchema, params.name);
    const input = sideEffectRequestSchema.parse(await readJson(req, { maxBytes: 8 * KiB }));
    ctx.annotate({ sideEffect: name, sideEffectState: input.state });
    const { effect } = await recordSideEffect({ db: db(), key, operationId: params.id, name, input, secret: env().TOLLGATE_SECRET_KEY });
    return json(effect);
  },
);

export const { GET, POST, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/operations/{id}/side-effects/{name}", ["PUT"]);
