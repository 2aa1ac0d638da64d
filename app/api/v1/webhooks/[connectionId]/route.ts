import { db } from "@/lib/db";
import { json } from "@/lib/http/respond";
import { handleRequest } from "@/lib/http/handle-errors";
import { ingestWebhook } from "@/lib/webhooks/ingest-webhook";
import { MiB, readRawBody } from "@/lib/webhooks/read-raw-body";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/v1/webhooks/{connectionId} – a provider's signed event (no API key: the signature is the auth)
export function POST(req: Request, routeContext: { params: Promise<{ connectionId: string }> }): Promise<Response> {
  return handleRequest(req, "/api/v1/webhooks/{connectionId}", async (ctx) => {
    const { connectionId } = await routeContext.params;
    const body = await readRawBody(req, MiB);
    const answer = await ingestWebhook({ db: db(), connectionId, headers: req.headers, body, annotate: ctx.annotate });
    return json(answer);
  });
}

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/webhooks/{connectionId}", ["POST"]);
