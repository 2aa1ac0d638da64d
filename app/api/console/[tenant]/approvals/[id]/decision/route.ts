import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { decideApproval } from "@/lib/approvals/decide-approval";
import { consoleDecisionRequestSchema } from "@/lib/approvals/approval-schemas";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/approvals/{id}/decision – an approver's yes or no from the console
export const POST = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/approvals/{id}/decision", capability: "decide-approvals" },
  async ({ req, user, tenant, params, ctx }) => {
    ctx.annotate({ approvalId: params.id });
    const { seenFlaggedAt, ...input } = consoleDecisionRequestSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    const approval = await decideApproval({ db: db(), tenantId: tenant.id, approvalId: params.id, input, actor: `user:${user.email}`, seenFlaggedAt });
    return json(approval);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/approvals/{id}/decision", ["POST"]);
