import type { Db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { eventDecidedProblem, type DecidedAnswer } from "@/lib/webhooks/event-decided-problem";

// The inbox's "ignore": an operator decides an event needs no action, with a reason (required
// here and in the SQL). The event leaves the inbox; it and the audit row say who and why.
export async function ignoreWebhookEvent(options: { db: Db; tenantId: string; eventId: string; reason: string; actor: string }): Promise<{ eventId: string; status: "ignored" }> {
  const rows = await options.db.$queryRaw<{ r: { code: string } & DecidedAnswer }[]>`
    SELECT tollgate_webhook_ignore(${options.tenantId}, ${options.eventId}, ${options.reason}, ${options.actor}) AS r`;
  const r = rows[0]?.r;
  if (r?.code === "ignored") return { eventId: options.eventId, status: "ignored" };
  if (r?.code === "not-found") throw new ProblemError("webhook-event-not-found", "No webhook event with this id exists in this tenant.");
  if (r?.code === "event-decided") throw eventDecidedProblem(r);
  throw new Error(`tollgate_webhook_ignore returned an unexpected answer: ${r?.code}`);
}
