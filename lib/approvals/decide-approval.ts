import type { Db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { metrics } from "@/lib/metrics/registry";
import type { ApprovalView, DecisionRequest } from "@/lib/approvals/approval-schemas";
import { approvalView, type SqlApproval } from "@/lib/approvals/approval-view";

// One person's yes or no to one approval. The API route (approver/admin key) and the console
// both call this; the rules live in tollgate_decide_approval: compare-and-set on the pending
// approval under the operation's row lock, audit in the same transaction, expiry honoured.
export async function decideApproval(options: {
  db: Db;
  tenantId: string;
  approvalId: string;
  input: DecisionRequest;
  actor: string;
  // A key limited to some tools may only decide approvals of those tools (empty = all).
  allowedTools?: string[];
  // The deciding API key's principal: the one that asked for the approval may not approve it.
  principal?: string;
  // The flag the console's page showed on the operation (its time; null: none). Undefined: not
  // known (the API), no check.
  seenFlaggedAt?: string | null;
}): Promise<ApprovalView> {
  const { input } = options;
  // expiredNow: this decision found the approval overdue and wrote its expiry (not one the sweep or a claim wrote before).
  const rows = await options.db.$queryRaw<{ r: { code: string; approval?: SqlApproval; expiredNow?: boolean; flagged?: boolean } }[]>`
    SELECT tollgate_decide_approval(${options.tenantId}, ${options.approvalId}, ${input.decision},
      ${input.reason ?? null}, ${options.actor}, ${options.allowedTools ?? []}::text[],
      ${options.principal ?? null}, ${options.seenFlaggedAt !== undefined}, ${options.seenFlaggedAt ?? null}::timestamptz) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_decide_approval returned nothing");
  const approval = r.approval ? approvalView(r.approval) : undefined;
  switch (r.code) {
    case "decided":
      metrics().approvalDecisions.inc({ decision: input.decision });
      return approval!;
    // "forbidden": the key is limited to other tools, and cannot read this approval either (404).
    case "approval-not-found":
    case "forbidden":
      throw new ProblemError("approval-not-found", "No approval with this id exists in your tenant.");
    case "requester-cannot-approve":
      throw new ProblemError(
        "forbidden",
        `The approval was requested by principal ${approval?.principal ?? "(this one)"}, whose keys cannot approve it: another principal or a person in the console must. It may still reject it (withdrawing the request).`,
        { extras: { approval } },
      );
    case "operation-changed":
      throw new ProblemError(
        "invalid-state",
        r.flagged
          ? "The operation was flagged since you opened this approval (or flagged again): read the flag, and check with the provider, before you approve."
          : "The operation's flag was taken down since you opened this approval: look at it as it stands before you approve.",
        { extras: { approval, flagged: r.flagged } },
      );
    case "approval-already-decided":
      throw new ProblemError(
        "approval-already-decided",
        `This approval was already decided (${approval?.state ?? "decided"}${approval?.decidedBy ? ` by ${approval.decidedBy}` : ""}); your decision was not recorded.`,
        { extras: { approval } },
      );
    case "approval-expired":
      // Once per expiry: every approver clicking after it hears 409, but only the writer counts it.
      if (r.expiredNow) metrics().approvalExpiries.inc();
      throw new ProblemError("approval-expired", "This approval expired (before the decision, or approved but not acted on before its use-by); the operation is rejected and will not run.", {
        extras: { approval },
      });
  }
  throw new Error(`tollgate_decide_approval returned an unexpected answer: ${r.code}`);
}
