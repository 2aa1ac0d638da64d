import { db } from "@/lib/db";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { listApprovals } from "@/lib/approvals/list-approvals";
import { listApprovalsQuerySchema } from "@/lib/approvals/approval-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/v1/approvals?state=pending – the queue an approver works through (oldest first)
export const GET = withApiKey({ route: "/api/v1/approvals", roles: ["approver", "admin"] }, async ({ req, key }) => {
  const query = listApprovalsQuerySchema.parse(Object.fromEntries(new URL(req.url).searchParams));
  return json(await listApprovals({ db: db(), tenantId: key.tenantId, query, allowedTools: key.tools }));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/approvals", ["GET"]);
