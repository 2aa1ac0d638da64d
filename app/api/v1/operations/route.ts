import { db } from "@/lib/db";
import { env } from "@/lib/env";
import { LOG_DIGEST_LENGTH, logDigest, sha256Hex } from "@/lib/crypto/digest";
import { ProblemError } from "@/lib/http/problem";
import { KiB, readJson } from "@/lib/http/read-json";
import { json, jsonText } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { claimOperation } from "@/lib/operations/claim-operation";
import { findOperationByKey } from "@/lib/operations/get-operation";
import { claimRequestSchema, idempotencyKeyPattern, lookupQuerySchema } from "@/lib/operations/operation-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

const route = "/api/v1/operations";

// POST /api/v1/operations – claim an operation under an Idempotency-Key
export const POST = withApiKey({ route, roles: ["agent", "admin"], hotPath: true }, async ({ req, key, ctx }) => {
  const idempotencyKey = req.headers.get("idempotency-key");
  if (idempotencyKey === null || idempotencyKey === "") {
    throw new ProblemError("idempotency-key-missing", "Send an Idempotency-Key header: one key per intent, reused on every retry of it.");
  }
  if (!idempotencyKeyPattern.test(idempotencyKey)) {
    throw new ProblemError("idempotency-key-invalid", "The Idempotency-Key must be 1 to 255 printable ASCII characters (0x21-0x7E), without spaces.");
  }
  const keyDigest = sha256Hex(idempotencyKey);
  ctx.annotate({ keyDigest: keyDigest.slice(0, LOG_DIGEST_LENGTH) });
  const input = claimRequestSchema.parse(await readJson(req, { maxBytes: 64 * KiB }));
  ctx.annotate({ tool: input.tool, workflowId: input.workflowId });
  const outcome = await claimOperation({ db: db(), key, idempotencyKey, keyDigest, input, secret: env().TOLLGATE_SECRET_KEY, annotate: ctx.annotate });
  switch (outcome.kind) {
    case "granted":
      ctx.annotate({ claim: outcome.how });
      return json(outcome.body, 201, { location: `/api/v1/operations/${outcome.body.operationId}` });
    case "awaiting-approval":
      ctx.annotate({ claim: "awaiting-approval" });
      return json(outcome.body, 202, { "retry-after": String(outcome.retryAfterSeconds) });
    case "replay":
      ctx.annotate({ claim: "replay" });
      return jsonText(outcome.text, 200, { "idempotent-replayed": "true" });
  }
});

// GET /api/v1/operations?tool=…&idempotencyKey=… – find the caller's operation by its key.
// The key may come in an Idempotency-Key header instead, as the claim sends it: a URL is written
// to every proxy's access log, and a raw key must reach no log.
export const GET = withApiKey({ route, roles: ["agent", "approver", "admin"] }, async ({ req, key, ctx }) => {
  const url = new URL(req.url);
  const inQuery = url.searchParams.get("idempotencyKey");
  const inHeader = req.headers.get("idempotency-key") || null;
  if (inQuery !== null && inHeader !== null && inQuery !== inHeader) {
    throw new ProblemError("invalid-request", "The idempotencyKey parameter and the Idempotency-Key header differ; send the key once (the header keeps it out of URLs and logs).");
  }
  const query = lookupQuerySchema.parse({ tool: url.searchParams.get("tool"), idempotencyKey: inQuery ?? inHeader });
  ctx.annotate({ tool: query.tool, keyDigest: logDigest(query.idempotencyKey) });
  const view = await findOperationByKey({ db: db(), tenantId: key.tenantId, principal: key.principal, tools: key.tools, ...query, annotate: ctx.annotate });
  if (!view) throw new ProblemError("operation-not-found", "No operation of yours has this tool and Idempotency-Key.");
  return json(view);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/operations", ["GET", "POST"]);
