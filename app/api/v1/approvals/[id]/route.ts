import { db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { getApproval } from "@/lib/approvals/list-approvals";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/v1/approvals/{id} – one approval with the exact args it covers
export const GET = withApiKey<{ id: string }>({ route: "/api/v1/approvals/{id}", roles: ["approver", "admin"], params: { id: "approval-not-found" } }, async ({ key, params }) => {
  const approval = await getApproval({ db: db(), tenantId: key.tenantId, approvalId: params.id });
  if (!approval || (key.tools.length > 0 && !key.tools.includes(approval.tool))) {
    throw new ProblemError("approval-not-found", "No approval with this id exists in your tenant.");
  }
  return json(approval);
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/approvals/{id}", ["GET"]);
