"use client";

import { useTransition, type FormEvent } from "react";
import { useQueryStates } from "nuqs";
import { auditQueryParsers, auditTargetTypes, knownAuditActions, serializeAuditQuery } from "@/lib/console/audit-query";
import { useDraft } from "@/components/ui/use-draft";

// A few views people want often, one click away.
const quick = [
  { label: "Resolutions", action: "operation.resolved" },
  { label: "Unknown outcomes", action: "operation.unknown" },
  { label: "Approvals", action: "approval." },
  { label: "API keys", action: "api_key." },
  { label: "Tools", action: "tool." },
  { label: "Users", action: "user." },
] as const;

// Times are typed and shown in UTC, as everywhere in the console: "2026-11-29T14:05" means 14:05 UTC.
const toInput = (d: Date | null) => (d ? d.toISOString().slice(0, 16) : "");
const fromInput = (v: string) => (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(v) ? new Date(`${v}:00Z`) : null);

// The audit log's filters. Edits stay local until "Apply" (or Enter), then go to the URL, so a
// filtered view is a link and the server reads the same parameters.
export function AuditFilters() {
  const [query, setQuery] = useQueryStates(auditQueryParsers, { shallow: false, history: "push" });
  const [pending, startTransition] = useTransition();
  const [draft, setDraft] = useDraft(serializeAuditQuery({ ...query, before: null, after: null }), () => ({
    action: query.action,
    actor: query.actor,
    type: query.type ?? "",
    target: query.target,
    from: toInput(query.from),
    to: toInput(query.to),
  }));
  const set = (key: keyof typeof draft, value: string) => setDraft((d) => ({ ...d, [key]: value }));
  const apply = (next: typeof draft) =>
    startTransition(() => {
      void setQuery({
        action: next.action.trim(),
        actor: next.actor.trim(),
        type: (auditTargetTypes as readonly string[]).includes(next.type) ? (next.type as (typeof auditTargetTypes)[number]) : null,
        target: next.target.trim(),
        from: fromInput(next.from),
        to: fromInput(next.to),
        before: null,
        after: null,
      });
    });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply(draft);
  };
  const clear = () => {
    const empty = { action: "", actor: "", type: "", target: "", from: "", to: "" };
    setDraft(empty);
    apply(empty);
  };

  return (
    <div className="stack audit-filter-wrap">
      <form className="toolbar audit-filters" role="search" aria-label="Filter the audit log" aria-busy={pending || undefined} onSubmit={submit}>
        <label>
          Action
          <input type="text" list="audit-actions" value={draft.action} onChange={(e) => set("action", e.target.value)} placeholder="operation." size={20} />
          <datalist id="audit-actions">
            {knownAuditActions.map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
        </label>
        <label>
          Actor
          <input type="text" value={draft.actor} onChange={(e) => set("actor", e.target.value)} placeholder="user: or api-key:" size={20} />
        </label>
        <label>
          Target type
          <select value={draft.type} onChange={(e) => set("type", e.target.value)}>
            <option value="">any</option>
            {auditTargetTypes.map((t) => (
              <option key={t} value={t}>
                {t.replace("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label>
          Target id
          <input type="text" value={draft.target} onChange={(e) => set("target", e.target.value)} placeholder="op_… (exact)" size={20} spellCheck={false} />
        </label>
        <label>
          From (UTC)
          <input type="datetime-local" value={draft.from} onChange={(e) => set("from", e.target.value)} />
        </label>
        <label>
          To (UTC)
          <input type="datetime-local" value={draft.to} onChange={(e) => set("to", e.target.value)} />
        </label>
        <button type="submit" className="primary">
          Apply
        </button>
        <button type="button" onClick={clear}>
          Clear
        </button>
        <span role="status" className="muted small">
          {pending ? "Loading…" : ""}
        </span>
      </form>
      <div className="row quick-filters" aria-label="Common views">
        <span className="muted small">Show:</span>
        {quick.map((q) => (
          <button
            key={q.action}
            type="button"
            className="chip"
            aria-pressed={query.action === q.action}
            onClick={() => {
              const next = { ...draft, action: query.action === q.action ? "" : q.action };
              setDraft(next);
              apply(next);
            }}
          >
            {q.label}
          </button>
        ))}
      </div>
    </div>
  );
}
