import type { Db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";

// An operator sends a dead (or already delivered) delivery again: back to pending with a fresh
// 24 h retry window (from its next first try), its job enqueued and an audit event written in the same transaction
// (tollgate_redeliver). The receiver gets the same webhook-id as before. Only to the subscription
// it was made for, as that subscription stands: not after a removal, not to a subscription put
// again under the name since (a new one), not an event type the subscription no longer wants.
export async function redeliver(options: { db: Db; tenantId: string; deliveryId: string; actor: string }): Promise<{ previousState: string }> {
  const rows = await options.db.$queryRaw<{ r: { code: string; previousState?: string; state?: string; type?: string } }[]>`
    SELECT tollgate_redeliver(${options.tenantId}, ${options.deliveryId}, ${options.actor}) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_redeliver returned nothing");
  if (r.code === "redelivered") return { previousState: r.previousState ?? "dead" };
  if (r.code === "not-found") throw new ProblemError("delivery-not-found", "No event delivery with this id exists in this tenant.");
  const extras = { extras: { state: r.state } };
  if (r.code === "subscription-removed") {
    throw new ProblemError("invalid-state", "Its subscription was removed, so nothing can be delivered to it (a subscription put again under its name is a new one).", extras);
  }
  if (r.code === "earlier-subscription") {
    throw new ProblemError(
      "invalid-state",
      "This delivery was made for an earlier subscription of this name, since removed; the subscription now under the name never asked for it, so it is not sent there.",
      extras,
    );
  }
  if (r.code === "not-subscribed") {
    throw new ProblemError("invalid-state", `Its subscription no longer subscribes to ${r.type ?? "this event type"}; add the type to the subscription, then redeliver.`, extras);
  }
  throw new ProblemError("invalid-state", "This delivery is still being retried; it can be sent again once it is delivered or dead.", extras);
}
