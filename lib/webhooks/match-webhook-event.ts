import type { Db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { metrics } from "@/lib/metrics/registry";
import type { OperationView } from "@/lib/operations/operation-schemas";
import { operationView, type SqlOperation } from "@/lib/operations/operation-view";
import type { MatchEventRequest } from "@/lib/webhooks/webhook-schemas";
import { eventDecidedProblem, type DecidedAnswer } from "@/lib/webhooks/event-decided-problem";
import { hasNotRun } from "@/lib/operations/has-not-run";

type Answer = { code: string; op?: SqlOperation; changed?: "flag"; flagged?: boolean } & DecidedAnswer;

// The inbox's "match": an operator ties an unmatched, unmapped or contradicting event to one of
// the tenant's operations with an outcome. A processing or unknown operation is settled by it
// (via webhook, by the person); a settled one is only linked, and only if it agrees. One SQL
// call: event and operation locked, changed and audited in one transaction.
export async function matchWebhookEvent(options: { db: Db; tenantId: string; eventId: string; input: MatchEventRequest; actor: string }): Promise<OperationView> {
  const { input } = options;
  const rows = await options.db.$queryRaw<{ r: Answer }[]>`
    SELECT tollgate_webhook_match(${options.tenantId}, ${options.eventId}, ${input.operationId}, ${input.outcome},
      ${input.reason ?? null}, ${options.actor}, ${input.eventStatus ?? null}, ${input.seenAttempts ?? null}::int,
      ${input.seenFlaggedAt !== undefined}, ${input.seenFlaggedAt ?? null}::timestamptz) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_webhook_match returned nothing");
  switch (r.code) {
    case "matched":
      if (!r.op) break;
      metrics().resolutions.inc({ outcome: input.outcome });
      return operationView(r.op);
    case "not-found":
      throw new ProblemError("webhook-event-not-found", "No webhook event with this id exists in this tenant.");
    case "operation-not-found":
      throw new ProblemError("operation-not-found", "No operation with this id exists in this tenant.", {
        extras: { errors: [{ path: "operationId", message: "no such operation in this tenant" }] },
      });
    case "event-decided":
      throw eventDecidedProblem(r, input.eventStatus);
    case "operation-changed":
      if (r.changed === "flag") {
        throw new ProblemError(
          "invalid-state",
          r.flagged
            ? "This operation was flagged since the inbox was read (or flagged again): a match may take its flag down, so read the flag on the operation before you match it."
            : "This operation's flag was taken down since the inbox was read: look at the operation again before you match it.",
          { extras: { operationId: r.op?.operationId, state: r.op?.state, flagged: r.flagged } },
        );
      }
      throw new ProblemError(
        "invalid-state",
        `Attempt ${r.op?.attempts} of this operation ran since the inbox was read (it showed ${input.seenAttempts ?? 0}): the event was weighed against an earlier attempt. Look at the operation again before you match it.`,
        { extras: { operationId: r.op?.operationId, state: r.op?.state, attempts: r.op?.attempts } },
      );
    case "invalid-state":
      throw new ProblemError(
        "invalid-state",
        r.op && hasNotRun(r.op)
          ? `The operation ${r.op.state === "rejected" ? "was rejected and never ran" : `is ${r.op.state === "pending" ? "approved and not yet claimed" : "awaiting approval"}: nothing of it has run yet`}, so no event can settle it or agree with it. Choose another operation${input.eventStatus === "ignored" ? "" : ", or ignore the event with a reason"}.`
          : `The operation is already ${r.op?.state}: matching it as ${input.outcome} would contradict that. Choose another operation${input.eventStatus === "ignored" ? "" : ", or ignore the event with a reason"}.`,
        { extras: { operationId: r.op?.operationId, state: r.op?.state } },
      );
  }
  throw new Error(`tollgate_webhook_match returned an unexpected answer: ${r.code}`);
}
