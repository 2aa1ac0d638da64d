"use client";

import { IntentLink } from "@/components/ui/intent-link";
import { hasNotRun } from "@/lib/operations/has-not-run";
import { useState, type ReactNode } from "react";
import { useRouter } from "next/navigation";
import type { InboxDecision, InboxEvent } from "@/lib/console/webhook-inbox";
import { JsonView } from "@/components/ui/json-view";
import { FlagMark } from "@/components/ui/flag-mark";
import { StateBadge } from "@/components/ui/state-badge";
import { TimeAgo } from "@/components/ui/time-ago";
import { FocusedNotice } from "@/components/ui/action-notice";
import { MatchDialog, type MatchTarget } from "./match-dialog";
import { IgnoreDialog } from "./ignore-dialog";
import { traceHref } from "@/lib/console/trace-origin";

const statusText: Record<InboxEvent["status"], { label: string; className: string; why: string }> = {
  unmatched: { label: "unmatched", className: "badge warn", why: "No operation of this tenant has its correlation value." },
  unmapped: { label: "unmapped", className: "badge warn", why: "Its event type maps to no outcome in the connection: say what it means." },
  contradicting: { label: "contradicting", className: "badge danger", why: "It contradicts what is recorded of the operation (its outcome, an attempt's report, or that it has not run yet): the operation is flagged for a person." },
  matched: { label: "matched", className: "badge hint-ok", why: "A person matched it to an operation." },
  ignored: { label: "ignored", className: "badge", why: "A person decided no operation needs it." },
};

export type Done = { kind: "matched"; eventId: string; operationId: string; state: string } | { kind: "ignored"; eventId: string };

// The inbox's events, each with its candidate operations. Matching or ignoring opens a dialog;
// the server decides (compare-and-set), and the page refreshes to what is stored. `empty` (the
// page's empty state) shows when no event is left; the list stays mounted, so the notice of the
// match or ignore that emptied the inbox is not lost with it.
export function InboxList({
  events,
  tenant,
  canMatch,
  actor,
  now,
  empty,
}: {
  events: InboxEvent[];
  tenant: string;
  canMatch: boolean;
  actor: string;
  now: number;
  empty?: ReactNode;
}) {
  const router = useRouter();
  const [matching, setMatching] = useState<MatchTarget | null>(null);
  const [ignoring, setIgnoring] = useState<InboxEvent | null>(null);
  const [done, setDone] = useState<Done | null>(null);
  const finish = (result: Done) => {
    setMatching(null);
    setIgnoring(null);
    setDone(result);
    router.refresh();
  };
  return (
    <div className="stack">
      {done ? <DoneNotice done={done} tenant={tenant} onDismiss={() => setDone(null)} /> : null}
      {events.length === 0 ? empty : null}
      {events.map((e) => (
        <article key={e.id} className="panel stack inbox-event" aria-label={`Webhook event ${e.id}`}>
          <div className="row" style={{ justifyContent: "space-between", flexWrap: "wrap" }}>
            <div className="row">
              <code>{e.eventType || "(no type)"}</code>
              <span className={statusText[e.status].className}>{statusText[e.status].label}</span>
              <span className="muted">
                from <strong>{e.connectionName}</strong> · received <TimeAgo at={e.receivedAt} now={now} />
              </span>
            </div>
            {canMatch && e.status !== "matched" ? (
              <div className="row">
                <button type="button" onClick={() => setMatching({ event: e, operationId: "" })}>
                  Match to an operation id…
                </button>
                {e.status === "ignored" ? null : (
                  <button type="button" onClick={() => setIgnoring(e)} aria-label={`Ignore ${e.id}`}>
                    Ignore…
                  </button>
                )}
              </div>
            ) : null}
          </div>
          {/* A decided event says who decided and why; one still waiting, why it waits. */}
          {e.decision ? <DecisionLine status={e.status} decision={e.decision} now={now} /> : <p className="muted small">{statusText[e.status].why}</p>}
          <dl className="kv">
            <dt>Webhook event</dt>
            <dd className="mono">{e.id}</dd>
            <dt>Provider event</dt>
            <dd className="mono">{e.providerEventId}</dd>
            <dt>Correlation value</dt>
            <dd>
              {e.correlationValue ? (
                <code>{e.correlationValue}</code>
              ) : e.payloadPrunedAt ? (
                <span className="muted">pruned with the payload</span>
              ) : (
                <span className="muted">none (no string or number of at most 500 characters at the connection&apos;s path)</span>
              )}
            </dd>
            {/* A match stores the outcome the person chose, which may not be the event's own (an unmapped type has none). */}
            <dt>{e.status === "matched" ? "Matched as" : "Outcome it says"}</dt>
            <dd>{e.outcome ?? <span className="muted">none: its type is not in the connection&apos;s outcome map</span>}</dd>
            {e.operationId ? (
              <>
                <dt>{e.status === "matched" ? "Matched to" : "Names operation"}</dt>
                <dd>
                  {/* No state: the operation is gone (pruned after its retention), so no link to a 404. */}
                  {e.operationState ? (
                    <>
                      <IntentLink href={traceHref(tenant, e.operationId, "inbox")} className="mono">
                        {e.operationId}
                      </IntentLink>{" "}
                      <StateBadge state={e.operationState} />
                    </>
                  ) : (
                    <>
                      <code>{e.operationId}</code> <span className="muted">(no longer stored: pruned after its retention)</span>
                    </>
                  )}
                </dd>
              </>
            ) : null}
          </dl>
          {e.payloadPrunedAt ? (
            <p className="muted small">Payload pruned {e.payloadPrunedAt.slice(0, 10)} (past the connection&apos;s retention).</p>
          ) : (
            <JsonView label="Payload" value={e.payload} />
          )}
          {e.status === "matched" ? null : (
            <Candidates event={e} tenant={tenant} canMatch={canMatch} now={now} onMatch={(operationId) => setMatching({ event: e, operationId })} />
          )}
        </article>
      ))}
      {matching ? (
        <MatchDialog
          tenant={tenant}
          // The event as the page has it now: after a 409 (another attempt, a flag raised) the page
          // refreshes behind the open dialog, which then shows and sends what is stored now, not
          // what was read when it opened (the same stale values again, 409 after 409).
          target={{ ...matching, event: events.find((e) => e.id === matching.event.id) ?? matching.event }}
          actor={actor}
          onClose={() => setMatching(null)}
          onDone={finish}
        />
      ) : null}
      {ignoring ? <IgnoreDialog tenant={tenant} event={ignoring} actor={actor} onClose={() => setIgnoring(null)} onDone={finish} /> : null}
    </div>
  );
}

function Candidates({ event, tenant, canMatch, now, onMatch }: { event: InboxEvent; tenant: string; canMatch: boolean; now: number; onMatch: (operationId: string) => void }) {
  if (event.candidates.length === 0) {
    return <p className="muted small">No likely operation: none of this tenant&apos;s unknown or running operations is close in time, of the same tool family, or has a resource id from the payload.</p>;
  }
  return (
    <div className="table-wrap">
      <table className="data candidates" aria-label={`Candidate operations for ${event.id}`}>
        <thead>
          <tr>
            <th scope="col">Candidate operation</th>
            <th scope="col">Tool</th>
            <th scope="col">State</th>
            <th scope="col">Started</th>
            <th scope="col">Arguments</th>
            <th scope="col">Why it may be this one</th>
            {canMatch ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {event.candidates.map((c) => (
            <tr key={c.id}>
              <td>
                <IntentLink href={traceHref(tenant, c.id, "inbox")} className="mono">
                  {c.id}
                </IntentLink>
              </td>
              <td className="c-tool" title={c.tool}>
                <code>{c.tool}</code>
              </td>
              <td className="c-state">
                {/* Its flag, read before matching: a match can take it down (and is refused if
                    the flag changed since this page was read). */}
                <span className="row">
                  <StateBadge state={c.state} />
                  {c.flag ? <FlagMark reason={c.flag.reason} /> : null}
                </span>
              </td>
              <td>
                <TimeAgo at={c.createdAt} now={now} />
              </td>
              {/* What tells five candidates of one tool apart (console review): their arguments. */}
              <td className="c-args" title={c.argsPreview ?? undefined}>
                {c.argsPreview ? <code>{c.argsPreview}</code> : <span className="muted">—</span>}
              </td>
              <td style={{ whiteSpace: "normal", maxWidth: 520 }}>{c.reasons.join("; ")}</td>
              {canMatch ? (
                <td>
                  {/* An operation that has not run (awaiting approval, approved and never
                      claimed, or rejected) cannot be settled by evidence: the server refuses every
                      match (tollgate_not_run). */}
                  {hasNotRun(c) ? (
                    <span className="small muted">has not run</span>
                  ) : (
                    <button type="button" onClick={() => onMatch(c.id)} aria-label={`Match ${event.id} to ${c.id}`}>
                      Match…
                    </button>
                  )}
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// Who decided a handled event, when, and in their words why.
function DecisionLine({ status, decision, now }: { status: InboxEvent["status"]; decision: InboxDecision; now: number }) {
  return (
    <p className="small decision">
      {status === "ignored" ? "Ignored" : "Matched"} by <strong>{decision.by.replace(/^user:/, "")}</strong> <TimeAgo at={decision.at} now={now} />
      {/* A match without a note stores a default one ("matched webhook event … in the inbox"): nobody wrote it. */}
      {decision.reason && !/^matched webhook event \S+ in the inbox$/.test(decision.reason) ? (
        <>
          : <q className="wrap-anywhere">{decision.reason}</q>
        </>
      ) : null}
    </p>
  );
}

// What the last match or ignore did. The card (and the button that had focus) leaves the list
// with the refresh, so focus goes to this notice instead of the page's body.
function DoneNotice({ done, tenant, onDismiss }: { done: Done; tenant: string; onDismiss: () => void }) {
  return (
    <FocusedNotice key={`${done.kind}:${done.eventId}`} onDismiss={onDismiss}>
      {done.kind === "matched" ? (
        <>
          Matched <code>{done.eventId}</code> to{" "}
          <IntentLink href={traceHref(tenant, done.operationId, "inbox")} className="mono">
            {done.operationId}
          </IntentLink>
          , now <strong>{done.state}</strong>. Its trace shows the event and who matched it.
        </>
      ) : (
        <>
          Ignored <code>{done.eventId}</code>. It is listed under <IntentLink href={`/t/${tenant}/inbox?status=handled`}>Handled</IntentLink>, with who ignored it and why, and can
          still be matched there.
        </>
      )}
    </FocusedNotice>
  );
}
