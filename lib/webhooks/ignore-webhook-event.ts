import type { Db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";

// The inbox's "ignore": an operator decides an event needs no action, with a reason (required
// here and in the SQL). The event leaves the inbox; it and the audit row say who and why.
export async function ignoreWebhookEvent(options: { db: Db; tenantId: string; eventId: string; reason: string; actor: string }): Promise<{ eventId: string; status: "ignored" }> {
  const rows = await options.db.$queryRaw<{ r: { code: string; status?: string } }[]>`
    SELECT tollgate_webhook_ignore(${options.tenantId}, ${options.eventId}, ${options.reason}, ${options.actor}) AS r`;
  const r = rows[0]?.r;
  if (r?.code === "ignored") return { eventId: options.eventId, status: "ignored" };
  if (r?.code === "not-found") throw new ProblemError("webhook-event-not-found", "No webhook event with this id exists in this tenant.");
  if (r?.code === "event-decided") {
    throw new ProblemError("invalid-state", `This event was already decided (${r.status}); reload the inbox.`, { extras: { status: r.status } });
  }
  throw new Error(`tollgate_webhook_ignore returned an unexpected answer: ${r?.code}`);
}
