import type { TraceAudit, TraceEntry, TraceField } from "@/lib/console/operation-trace";
import { JsonView } from "@/components/ui/json-view";
import { TimeAgo } from "@/components/ui/time-ago";
import { gap, utcDate, utcDateTime, utcTime } from "@/components/timeline/format-time";

// A vertical timeline of trace entries, oldest first. Server-rendered: the JSON parts are
// <details>, so it needs no client JavaScript and stays keyboard-usable.
export function Timeline({ entries, now, label = "Timeline" }: { entries: TraceEntry[]; now: number; label?: string }) {
  return (
    <ol className="timeline trace" aria-label={label}>
      {entries.map((e, i) => {
        const previous = entries[i - 1];
        const newDay = !previous || utcDate(previous.at) !== utcDate(e.at);
        const since = previous ? gap(previous.at, e.at) : null;
        return (
          <li key={e.key} className={`t-${e.tone}`} data-kind={e.kind}>
            <div className="t-head">
              <span className="t-title">{e.title}</span>
              {e.actor ? (
                <span className="t-actor">
                  by <span title={e.actor.id}>{e.actor.label}</span>
                </span>
              ) : null}
              <span className="t-when">
                <time dateTime={e.at} title={utcDateTime(e.at)}>
                  {newDay ? `${utcDate(e.at)} ` : ""}
                  {utcTime(e.at)}
                </time>
                {since ? <span className="t-gap">{since}</span> : null}
              </span>
            </div>
            {e.fields.length ? (
              <dl className="kv t-fields">
                {e.fields.map((f) => (
                  <Field key={f.label} field={f} now={now} />
                ))}
              </dl>
            ) : null}
            {e.json.map((j) => (
              <JsonView key={j.label} label={j.label} value={j.value} />
            ))}
            {e.audit.map((a) => (
              <AuditLine
                key={a.id}
                audit={a}
                showActor={a.actor.id !== e.actor?.id}
                showReason={!e.fields.some((f) => f.label === "Reason" && f.value === a.reason)}
              />
            ))}
          </li>
        );
      })}
    </ol>
  );
}

function Field({ field, now }: { field: TraceField; now: number }) {
  return (
    <>
      <dt>{field.label}</dt>
      <dd>
        {field.format === "time" ? (
          <>
            <span className="mono">{utcDateTime(field.value)}</span> <span className="muted">(<TimeAgo at={field.value} now={now} />)</span>
          </>
        ) : field.format === "clock" ? (
          <span className="mono">{utcDateTime(field.value)}</span>
        ) : field.format === "mono" ? (
          <code>{field.value}</code>
        ) : (
          field.value
        )}
      </dd>
    </>
  );
}

const INLINE_LIMIT = 400;

// One audit event: action, actor, reason, and what changed. Short before/after inline; long ones fold.
function AuditLine({ audit, showActor, showReason }: { audit: TraceAudit; showActor: boolean; showReason: boolean }) {
  const before = audit.before === null || audit.before === undefined ? null : JSON.stringify(audit.before);
  const after = audit.after === null || audit.after === undefined ? null : JSON.stringify(audit.after);
  const inline = (before?.length ?? 0) + (after?.length ?? 0) <= INLINE_LIMIT;
  return (
    <div className="t-audit">
      <div>
        <span className="muted">audit #{audit.id}</span> <code>{audit.action}</code>
        {showActor ? (
          <>
            {" "}
            <span className="muted">by</span> <span title={audit.actor.id}>{audit.actor.label}</span>
          </>
        ) : null}
        {audit.reason && showReason ? (
          <>
            {" "}
            <span className="muted">reason</span> <q>{audit.reason}</q>
          </>
        ) : null}
      </div>
      {inline ? (
        before || after ? (
          <div className="t-change mono">
            {before ?? "∅"} <span className="muted">→</span> {after ?? "∅"}
          </div>
        ) : null
      ) : (
        <>
          <JsonView label="before" value={audit.before} />
          <JsonView label="after" value={audit.after} />
        </>
      )}
    </div>
  );
}
