"use client";

import { useEffect, useRef } from "react";
import { debounce, type SetValues } from "nuqs";
import {
  hasEmptyTimeRange,
  operationStates,
  operationsPositionReset,
  type OperationsQuery,
  type OperationStateName,
  type operationsQueryParsers,
} from "@/lib/console/operations-query";

type Props = {
  query: OperationsQuery;
  setQuery: SetValues<typeof operationsQueryParsers>;
  tools: string[];
  principals: string[];
  busy: boolean;
  // Swaps "created from" and "created before" (the page's empty state offers it too).
  onSwapDates: () => void;
};

// Typing waits for a pause before it asks the server; picking from a list asks at once.
const typing = { limitUrlUpdates: debounce(350) } as const;
const picking = { history: "push" } as const;

// The filter bar. Every control writes the URL (and so the server query); every change goes
// back to the first page. Times are UTC, as everywhere else in the console.
export function OperationFilters({ query, setQuery, tools, principals, busy, onSwapDates }: Props) {
  const search = useRef<HTMLInputElement>(null);
  const states = useRef<HTMLDetailsElement>(null);
  // The State popover closes as a menu does: on Escape (focus back on its summary) and on a click
  // outside it. A <details> alone stays open over the table's columns (console review).
  useEffect(() => {
    const close = (refocus: boolean) => {
      const details = states.current;
      if (!details?.open) return;
      details.open = false;
      if (refocus) details.querySelector("summary")?.focus();
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && states.current?.contains(e.target as Node)) close(true);
    };
    const onPointer = (e: PointerEvent) => {
      if (!states.current?.contains(e.target as Node)) close(false);
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("pointerdown", onPointer);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("pointerdown", onPointer);
    };
  }, []);
  // "/" focuses the search box, as in most consoles (not while typing in another field).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (e.key !== "/" || e.metaKey || e.ctrlKey || e.altKey || target?.closest("input, textarea, select, [contenteditable]")) return;
      e.preventDefault();
      search.current?.focus();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const set = (patch: Partial<OperationsQuery>, options: typeof typing | typeof picking = picking) =>
    void setQuery({ ...patch, ...operationsPositionReset }, options);
  const toggleState = (state: OperationStateName, on: boolean) =>
    set({ state: on ? operationStates.filter((s) => s === state || query.state.includes(s)) : query.state.filter((s) => s !== state) });
  // Keep a value from the URL selectable even when it is not among the known ones.
  const toolOptions = query.tool && !tools.includes(query.tool) ? [query.tool, ...tools] : tools;
  const principalOptions = query.principal && !principals.includes(query.principal) ? [query.principal, ...principals] : principals;
  // The pickers' min/max keep a picked range the right way round, but a typed date can still
  // cross the other: say so beside the dates rather than leave an empty table unexplained.
  const emptyRange = hasEmptyTimeRange(query);
  const rangeHint = emptyRange ? "ops-range-hint" : undefined;

  return (
    <form
      className="toolbar ops-filters"
      role="search"
      aria-label="Filter operations"
      aria-busy={busy || undefined}
      onSubmit={(e) => {
        e.preventDefault();
        set({ q: search.current?.value.trim() ?? "" });
      }}
    >
      <label className="ops-search">
        <span>
          Search <kbd title="Press / to search">/</kbd>
        </span>
        <input
          ref={search}
          type="search"
          value={query.q}
          placeholder="Operation id, workflow id, resource id, downstream key or key digest (sha256 hex)"
          onChange={(e) => set({ q: e.target.value }, typing)}
          spellCheck={false}
          autoComplete="off"
        />
      </label>
      <details className="ops-states" ref={states}>
        <summary aria-label={`State filter: ${query.state.length ? query.state.join(", ") : "any state"}`}>
          <span className="ops-states-label">State</span>
          <span className="ops-states-value">{query.state.length === 0 ? "Any" : query.state.length === 1 ? query.state[0]?.replace("_", " ") : `${query.state.length} states`}</span>
        </summary>
        <fieldset>
          <legend>Any of these states</legend>
          {operationStates.map((state) => (
            <label key={state}>
              <input type="checkbox" checked={query.state.includes(state)} onChange={(e) => toggleState(state, e.target.checked)} />
              {state.replace("_", " ")}
            </label>
          ))}
          {query.state.length > 0 ? (
            <button type="button" className="link-button" onClick={() => set({ state: [] })}>
              Any state
            </button>
          ) : null}
        </fieldset>
      </details>
      <label>
        Tool
        <select value={query.tool} onChange={(e) => set({ tool: e.target.value })}>
          <option value="">Any</option>
          {toolOptions.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label>
        Principal
        <select value={query.principal} onChange={(e) => set({ principal: e.target.value })}>
          <option value="">Any</option>
          {principalOptions.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <div className="ops-range" role="group" aria-labelledby="ops-created-label">
        <span id="ops-created-label">Created (UTC)</span>
        <div className="row">
          <input
            type="datetime-local"
            id={CREATED_FROM_ID}
            aria-label="Created from (UTC)"
            aria-invalid={emptyRange || undefined}
            aria-describedby={rangeHint}
            value={toInput(query.from)}
            max={toInput(query.to) || undefined}
            onChange={(e) => set({ from: fromInput(e.target.value) }, typing)}
          />
          <span aria-hidden="true">–</span>
          <input
            type="datetime-local"
            aria-label="Created before (UTC)"
            aria-invalid={emptyRange || undefined}
            aria-describedby={rangeHint}
            value={toInput(query.to)}
            min={toInput(query.from) || undefined}
            onChange={(e) => set({ to: fromInput(e.target.value) }, typing)}
          />
        </div>
        {/* Always there, so a screen reader announces the hint when a typed date makes it appear. */}
        <p id="ops-range-hint" className="warn-text ops-range-hint" aria-live="polite">
          {emptyRange ? (
            <>
              “From” is not before “before”: nothing can match.{" "}
              <button type="button" className="link-button" onClick={onSwapDates}>
                Swap them
              </button>
            </>
          ) : null}
        </p>
      </div>
      <div className="ops-checks">
        <label className="ops-check">
          <input type="checkbox" checked={query.conflicts} onChange={(e) => set({ conflicts: e.target.checked })} />
          Has conflicts
        </label>
        <label className="ops-check" title="Evidence (a webhook, an attempt's later report) contradicts the recorded outcome">
          <input type="checkbox" checked={query.flagged} onChange={(e) => set({ flagged: e.target.checked })} />
          Flagged
        </label>
      </div>
    </form>
  );
}

const CREATED_FROM_ID = "ops-created-from";

// After a swap of the dates (its button gone), the keyboard goes on from the first of them.
export function focusCreatedFrom(): void {
  document.getElementById(CREATED_FROM_ID)?.focus();
}

// <input type="datetime-local"> speaks local wall-clock time without a zone; the console
// speaks UTC, so the value is the UTC wall-clock time ("2026-11-29T14:05").
function toInput(date: Date | null): string {
  return date ? date.toISOString().slice(0, 16) : "";
}

function fromInput(value: string): Date | null {
  if (!value) return null;
  const date = new Date(`${value}:00Z`);
  return Number.isNaN(date.getTime()) ? null : date;
}
