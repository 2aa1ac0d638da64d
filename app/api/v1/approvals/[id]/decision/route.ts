import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { decideApproval } from "@/lib/approvals/decide-approval";
import { decisionRequestSchema } from "@/lib/approvals/approval-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/v1/approvals/{id}/decision – approve (→ pending, the agent's next claim gets a lease) or reject
export const POST = withApiKey<{ id: string }>(
  { route: "/api/v1/approvals/{id}/decision", roles: ["approver", "admin"], params: { id: "approval-not-found" } },
  async ({ req, key, params, ctx }) => {
    ctx.annotate({ approvalId: params.id });
    const input = decisionRequestSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    const approval = await decideApproval({
      db: db(),
      tenantId: key.tenantId,
      approvalId: params.id,
      input,
      actor: `api-key:${key.id}`,
      allowedTools: key.tools,
      principal: key.principal,
    });
    return json(approval);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/approvals/{id}/decision", ["POST"]);
