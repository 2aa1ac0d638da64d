import type { TraceAudit, TraceEntry, TraceSource, TraceTone } from "@/lib/console/operation-trace";
import { attemptNumber, field } from "@/lib/console/trace-fields";

// The operation trace's provider webhooks: one entry per event tied to the operation (matched
// automatically, matched or ignored by an operator from the inbox, unmapped, contradicting),
// with its payload folded (<details>) until someone opens it, or the date it was pruned. The
// operation's own audit events about it (a webhook's flag, an operator's link) and the event's
// audit events (webhook_event.matched / .ignored) are shown in the same entry.

type EventRow = {
  id: string;
  connectionName: string;
  eventType: string;
  providerEventId: string;
  status: string;
  outcome: string | null;
  correlationValue: string | null;
  payload: unknown;
  payloadPrunedAt: Date | null;
  receivedAt: Date;
  decidedBy: string | null;
  decidedAt: Date | null;
  reason: string | null;
  // The side effect whose own downstream key the event named, if it named one.
  sideEffect: string | null;
};
type EventAudit = { id: bigint; targetId: string; actor: string; action: string; reason: string | null; before: unknown; after: unknown; createdAt: Date };
type Rows = { events: EventRow[]; audits: EventAudit[] };

const tones: Record<string, TraceTone> = { matched: "ok", unmatched: "warn", unmapped: "warn", contradicting: "bad", ignored: "info" };

export const webhookEventsTraceSource: TraceSource<Rows> = {
  name: "webhook-events",
  load: async (q) => {
    const [events, audits] = await Promise.all([
      q.db.$queryRaw<EventRow[]>`
        SELECT e.id, c.name AS "connectionName", e.event_type AS "eventType", e.provider_event_id AS "providerEventId",
          e.status::text AS status, e.outcome, e.correlation_value AS "correlationValue", e.payload,
          e.payload_pruned_at AS "payloadPrunedAt", e.received_at AS "receivedAt", e.decided_by AS "decidedBy", e.decided_at AS "decidedAt", e.reason,
          (SELECT s.name FROM side_effect s WHERE s.tenant_id = e.tenant_id AND s.operation_id = e.operation_id
            AND s.downstream_key = e.correlation_value) AS "sideEffect"
        FROM webhook_event e JOIN webhook_connection c ON c.id = e.connection_id
        WHERE e.tenant_id = ${q.tenantId} AND e.operation_id = ${q.operationId}
        ORDER BY e.received_at, e.id`,
      q.db.$queryRaw<EventAudit[]>`
        SELECT a.id, a.target_id AS "targetId", a.actor, a.action, a.reason, a.before, a.after, a.created_at AS "createdAt"
        FROM audit_event a
        WHERE a.tenant_id = ${q.tenantId} AND a.target_type = 'webhook_event'
          AND a.target_id IN (SELECT e.id FROM webhook_event e WHERE e.tenant_id = ${q.tenantId} AND e.operation_id = ${q.operationId})
        ORDER BY a.id`,
    ]);
    return { events, audits };
  },
  build: (ctx, { events, audits }) =>
    events.map((e) => {
      const own = ctx.takeAudits((a) => {
        const after = a.after as { eventId?: unknown } | null;
        return ["operation.webhook_conflict", "operation.webhook_matched", "operation.webhook_not_applied", "operation.unknown"].includes(a.action) && after?.eventId === e.id;
      });
      const eventAudits: TraceAudit[] = audits
        .filter((a) => a.targetId === e.id)
        .map((a) => ({ id: `w${a.id}`, at: a.createdAt.toISOString(), actor: ctx.actor(a.actor), action: a.action, reason: a.reason, before: a.before, after: a.after }));
      const settledIt = (ctx.op.resolution as { by?: unknown } | null)?.by === `webhook:${e.id}`;
      // A failed event refused because side effects may have happened names them (tollgate_webhook_ingest).
      const effects = own.map((a) => (a.before as { sideEffects?: unknown } | null)?.sideEffects).find((v): v is string => typeof v === "string");
      const decider = e.decidedBy ? ctx.actor(e.decidedBy).label : null;
      // Flagged (or, said succeeded of an approved one, made unknown) by ingest because nothing of
      // the operation had run: its audit says so with the attempts it had, none.
      const notRun = own.find((a) => (a.before as { attempts?: unknown } | null)?.attempts === 0)?.action ?? null;
      // Said succeeded of an operation waiting to retry: its outcome became unknown.
      const madeUnknown = own.find((a) => a.action === "operation.unknown");
      const failedAttempt = attemptNumber(madeUnknown?.before) ?? null;
      // Said failed when an earlier attempt may have made the call it reports (tollgate_webhook_ingest).
      const echoed = own.find((a) => a.action === "operation.webhook_not_applied");
      const echoedAttempt = (echoed?.after as { failedAttempt?: unknown } | null)?.failedAttempt;
      const earlierOutcome = (echoed?.after as { earlierOutcome?: unknown } | null)?.earlierOutcome;
      return {
        key: `webhook-${e.id}`,
        at: e.receivedAt.toISOString(),
        kind: "webhook",
        // Matched but settling nothing is not the green of an event that agreed or settled.
        tone: typeof echoedAttempt === "number" ? "info" : (tones[e.status] ?? "info"),
        rank: 4,
        title: title(e, { settledIt, decider, effects: effects ?? null, notRun, failedAttempt, echoedAttempt: typeof echoedAttempt === "number" ? { attempt: echoedAttempt, ended: typeof earlierOutcome === "string" ? earlierOutcome : null } : null, state: ctx.op.state }),
        actor: { id: `webhook:${e.id}`, label: `${e.connectionName} webhook` },
        fields: [
          ...field("Webhook event", e.id, "mono"),
          ...field("Provider event", e.providerEventId, "mono"),
          // An operator's match sets the event's outcome; what the provider's type mapped to
          // before is in the match's audit event. Shown apart, so the trace never puts the
          // operator's choice in the provider's mouth.
          ...(e.decidedBy && e.status === "matched"
            ? [
                ...field("Outcome its type maps to", providerOutcome(eventAudits) ?? "none (its type maps to no outcome)"),
                ...field("Outcome chosen by the operator", e.outcome),
              ]
            : field("Outcome it says", e.outcome ?? "none (its type maps to no outcome)")),
          ...field("Side effects that may have happened", e.status === "contradicting" ? effects : null),
          ...field("Correlation value", e.correlationValue, "mono"),
          ...field("Decided by", decider),
          // The entry stands at the event's arrival; an operator's match or ignore came later
          // (the trace read as if it had been matched seconds after arriving; console review).
          ...field(e.status === "ignored" ? "Ignored at" : "Matched at", e.decidedBy ? (e.decidedAt?.toISOString() ?? null) : null, "clock"),
          ...field("Reason", e.decidedBy ? e.reason : null),
          ...field("Payload pruned", e.payloadPrunedAt?.toISOString(), "clock"),
        ],
        json: e.payload === null ? [] : [{ label: "Webhook payload", value: e.payload }],
        audit: [...own, ...eventAudits],
      } satisfies TraceEntry;
    }),
};

// How the earlier attempt an event may be about ended. Audits from before earlierOutcome was
// recorded were all of an attempt that reported failed (retryable).
function earlierAttempt(attempt: number, ended: string | null): string {
  switch (ended) {
    case "lease_lost":
      return `but attempt ${attempt}'s lease ran out while it may have been making that call`;
    case "taken_over":
      return `but attempt ${attempt} was taken over while it may have been making that call`;
    case "unknown":
      return `but attempt ${attempt} had reported its outcome unknown`;
    case "failed":
      return `as attempt ${attempt} had reported`;
    default:
      return `as attempt ${attempt} had reported (retryable)`;
  }
}

function providerOutcome(audits: TraceAudit[]): string | null {
  const match = audits.find((a) => a.action === "webhook_event.matched");
  const before = (match?.before ?? null) as { outcome?: unknown } | null;
  return typeof before?.outcome === "string" ? before.outcome : null;
}

function title(
  e: EventRow,
  how: {
    settledIt: boolean;
    decider: string | null;
    effects: string | null;
    notRun: string | null;
    failedAttempt: number | null;
    echoedAttempt: { attempt: number; ended: string | null } | null;
    state: string;
  },
): string {
  const what = `Webhook ${e.eventType || "(no type)"} from ${e.connectionName}`;
  switch (e.status) {
    case "matched":
      if (how.decider) return `${what} · matched by ${how.decider} as ${e.outcome}`;
      if (how.settledIt) return `${what} · resolved the operation as ${e.outcome}`;
      if (how.echoedAttempt !== null) {
        const { attempt, ended } = how.echoedAttempt;
        return `${what} says ${e.outcome}, ${earlierAttempt(attempt, ended)}: it may be about that call, so it settled nothing (not applied)`;
      }
      // About one provider call of several: it settled that call, not the operation (which may
      // still be unknown; "agrees with the outcome" read as if it had settled it).
      if (e.sideEffect) return `${what} · side effect ${e.sideEffect} ${e.outcome === "succeeded" ? "confirmed" : "failed"} by its provider`;
      // A rejected operation's outcome is failed (tollgate_effective_outcome).
      return (how.state === "rejected" ? "failed" : how.state) === e.outcome ? `${what} · agrees with the outcome (${e.outcome})` : `${what} says ${e.outcome}`;
    case "contradicting":
      if (how.notRun === "operation.unknown") return `${what} says ${e.outcome}, but the operation had not run yet: its outcome became unknown (flagged)`;
      if (how.notRun) return `${what} says ${e.outcome}, but the operation had not run yet (flagged, not applied)`;
      if (how.failedAttempt !== null) {
        return `${what} says ${e.outcome}, but attempt ${how.failedAttempt} had reported failed (retryable): its outcome became unknown, no retry runs (flagged)`;
      }
      if (how.effects) return `${what} says ${e.outcome}, but side effects may have happened (flagged, not applied)`;
      return `${what} says ${e.outcome}: contradicts the recorded outcome (flagged, not applied)`;
    case "unmapped":
      return `${what}: its type maps to no outcome (waiting in the inbox)`;
    case "ignored":
      return `${what} · ignored${how.decider ? ` by ${how.decider}` : ""}`;
    default:
      return `${what} (${e.status})`;
  }
}
