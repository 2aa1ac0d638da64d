"use client";

import { useRef, useTransition, type FormEvent } from "react";
import { useDraft } from "@/components/ui/use-draft";
import { useQueryStates } from "nuqs";
import { inboxQueryParsers, inboxStatuses, serializeInboxQuery, type InboxStatus, type InboxView } from "@/lib/console/inbox-query";

export type InboxCounts = { all: number; byStatus: Record<InboxStatus, number>; handled: number; connections: { name: string; count: number }[] };

const statusLabel: Record<InboxStatus, string> = { unmatched: "Unmatched", unmapped: "Unmapped", contradicting: "Contradicting" };

// The inbox's filters: a reason and a connection apply at once (each with how many events wait
// there, counted over the whole inbox), the search on Enter or "Find". Everything goes to the
// URL, so a narrowed inbox is a link, and every change starts from the newest event again.
export function InboxFilters({ counts }: { counts: InboxCounts }) {
  const [query, setQuery] = useQueryStates(inboxQueryParsers, { shallow: false, history: "push" });
  const [pending, startTransition] = useTransition();
  // Restarts from the URL on any filter change (Back, a chip), not only a new search.
  const [q, setQ] = useDraft(serializeInboxQuery({ ...query, before: null }), () => query.q);
  const searchBox = useRef<HTMLInputElement>(null);
  const apply = (patch: Partial<{ status: InboxView | null; connection: string; q: string }>) =>
    startTransition(() => void setQuery({ ...patch, before: null }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply({ q: q.trim() });
  };
  // A connection named in the URL stays selectable after its last event left the inbox.
  const connections = query.connection && !counts.connections.some((c) => c.name === query.connection) ? [{ name: query.connection, count: 0 }, ...counts.connections] : counts.connections;

  return (
    <div className="stack audit-filter-wrap">
      <div className="row quick-filters" role="group" aria-label="Which events">
        <button type="button" className="chip" aria-pressed={query.status === null} onClick={() => apply({ status: null })}>
          All {counts.all.toLocaleString("en-US")}
        </button>
        {inboxStatuses.map((s) => (
          <button key={s} type="button" className="chip" aria-pressed={query.status === s} onClick={() => apply({ status: query.status === s ? null : s })}>
            {statusLabel[s]} {counts.byStatus[s].toLocaleString("en-US")}
          </button>
        ))}
        {/* Not a reason to wait but the history: apart from the others, and not in "All". */}
        <span className="chip-divider" aria-hidden="true" />
        <button type="button" className="chip" aria-pressed={query.status === "handled"} onClick={() => apply({ status: query.status === "handled" ? null : "handled" })}>
          Handled {counts.handled.toLocaleString("en-US")}
        </button>
      </div>
      <form className="toolbar audit-filters" role="search" aria-label="Filter the inbox" aria-busy={pending || undefined} onSubmit={submit}>
        <label>
          Connection
          <select value={query.connection} onChange={(e) => apply({ connection: e.target.value })}>
            <option value="">any</option>
            {connections.map((c) => (
              <option key={c.name} value={c.name}>
                {c.name} ({c.count.toLocaleString("en-US")})
              </option>
            ))}
          </select>
        </label>
        <label>
          Find
          <input
            ref={searchBox}
            type="search"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="Event id, provider event id, correlation value or type"
            title="Matches exactly: Tollgate's event id, the provider's event id, the correlation value or the event type"
            size={48}
            spellCheck={false}
            autoComplete="off"
          />
        </label>
        <button type="submit" className="primary">
          Find
        </button>
        {query.status || query.connection || query.q ? (
          <button
            type="button"
            onClick={() => {
              setQ("");
              apply({ status: null, connection: "", q: "" });
              // This button leaves with the filters it cleared: focus goes to the search, not the page's body.
              searchBox.current?.focus();
            }}
          >
            Clear
          </button>
        ) : null}
        <span role="status" className="muted small">
          {pending ? "Loading…" : ""}
        </span>
      </form>
    </div>
  );
}
