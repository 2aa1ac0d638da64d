"use client";

import { IntentLink } from "@/components/ui/intent-link";
import { useEffect, useRef, useState, type ReactNode } from "react";
import { useRouter } from "next/navigation";
import type { ReconcileRow } from "@/lib/console/reconcile-queue";
import { ResolveDialog, type ResolveOutcome } from "@/components/resolve-dialog/resolve-dialog";
import { FlagMark } from "@/components/ui/flag-mark";
import { StateBadge } from "@/components/ui/state-badge";
import { TimeAgo } from "@/components/ui/time-ago";
import { formatAge } from "@/components/ui/format-age";
import { useTickingNow } from "@/components/ui/use-ticking-now";
import { useTakeFocus } from "@/components/ui/action-notice";
import { ResolveSummary } from "./resolve-summary";
import { traceHref } from "@/lib/console/trace-origin";

// The queue as a plain table: select rows (or all) and resolve them with one outcome and one
// reason, or resolve a single row. Viewers get the same table without checkboxes or buttons.
// `empty` (the page's empty state) replaces the table when the queue is empty; the component
// stays mounted, so the summary of the resolve that emptied the queue is not lost with it.
export function ReconcileTable({
  rows,
  tenant,
  canResolve,
  actor,
  now,
  empty,
}: {
  rows: ReconcileRow[];
  tenant: string;
  canResolve: boolean;
  actor: string;
  now: number;
  empty?: ReactNode;
}) {
  const router = useRouter();
  // The queue's ages keep counting while it stays open, as its TimeAgo cells do.
  const current = useTickingNow(now, 10_000);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [dialogIds, setDialogIds] = useState<string[] | null>(null);
  const toolsById = Object.fromEntries(rows.map((r) => [r.id, r.tool]));
  const attemptsById = Object.fromEntries(rows.map((r) => [r.id, r.attempts]));
  const flagsById = Object.fromEntries(rows.map((r) => [r.id, r.flag?.at ?? null]));
  const [outcome, setOutcome] = useState<ResolveOutcome | null>(null);
  const selectAll = useRef<HTMLInputElement>(null);
  // After a resolve the row (and the button that had focus) leaves the queue: focus goes to what
  // happened, in view, not to the page's body far from it (console review).
  const summaryBox = useTakeFocus<HTMLDivElement>(outcome);
  // Rows resolved and refreshed away no longer count as selected.
  const chosen = rows.filter((r) => selected.has(r.id)).map((r) => r.id);
  const all = rows.length > 0 && chosen.length === rows.length;

  useEffect(() => {
    if (selectAll.current) selectAll.current.indeterminate = chosen.length > 0 && !all;
  }, [chosen.length, all]);

  const toggle = (id: string) =>
    setSelected((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const summary = outcome ? (
    <div ref={summaryBox} tabIndex={-1} className="focus-target">
      <ResolveSummary outcome={outcome} tenant={tenant} onDismiss={() => setOutcome(null)} />
    </div>
  ) : null;
  if (empty) {
    return (
      <div className="stack">
        {summary}
        {empty}
      </div>
    );
  }
  return (
    <div className="stack">
      {summary}
      {canResolve ? (
        <div className="toolbar bulk-bar" role="toolbar" aria-label="Bulk actions">
          <span className="muted" aria-live="polite">
            {chosen.length ? `${chosen.length} selected` : "Select rows to resolve several at once"}
          </span>
          <button type="button" className="primary" disabled={!chosen.length} onClick={() => setDialogIds(chosen)}>
            Resolve selected…
          </button>
          {chosen.length ? (
            <button type="button" onClick={() => setSelected(new Set())}>
              Clear selection
            </button>
          ) : null}
        </div>
      ) : null}
      <div className="table-wrap">
        <table className="data reconcile">
          <thead>
            <tr>
              {canResolve ? (
                <th className="check">
                  <input
                    ref={selectAll}
                    type="checkbox"
                    aria-label="Select all rows on this page"
                    checked={all}
                    onChange={() => setSelected(all ? new Set() : new Set(rows.map((r) => r.id)))}
                  />
                </th>
              ) : null}
              <th scope="col">Age</th>
              <th scope="col">Operation</th>
              <th scope="col">Tool</th>
              <th scope="col">Principal</th>
              <th scope="col">Why here</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              {canResolve ? (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} aria-selected={canResolve ? selected.has(r.id) : undefined}>
                {canResolve ? (
                  <td className="check">
                    <input type="checkbox" aria-label={`Select ${r.id}`} checked={selected.has(r.id)} onChange={() => toggle(r.id)} />
                  </td>
                ) : null}
                <td title={r.createdAt}>{formatAge(current - new Date(r.createdAt).getTime()).replace(/ ago$/, "")}</td>
                <td>
                  <IntentLink href={traceHref(tenant, r.id, "reconcile")} className="mono">
                    {r.id}
                  </IntentLink>
                </td>
                <td className="c-tool" title={r.tool}>
                  <code>{r.tool}</code>
                </td>
                <td className="c-principal" title={r.principal}>
                  {r.principal}
                </td>
                <td className="why-here">
                  {r.state === "unknown" ? (
                    <>
                      <StateBadge state="unknown" /> <span className="muted"><TimeAgo at={r.updatedAt} now={now} /></span>
                    </>
                  ) : (
                    <>
                      <span className="badge warn">lease expired</span> <span className="muted"><TimeAgo at={r.leaseExpiresAt} now={now} /></span>
                    </>
                  )}
                  {r.conflicts ? <span className="muted" title="Claims refused meanwhile (409/422/429)"> · {r.conflicts} refused</span> : null}
                  {/* Read before resolving: a resolve takes the flag down. */}
                  {r.flag ? (
                    <>
                      {" "}
                      <FlagMark reason={r.flag.reason} />
                    </>
                  ) : null}
                </td>
                <td>
                  {r.attempts} / {r.maxAttempts}
                </td>
                <td className="last-error" title={errorText(r.lastError) ?? undefined}>
                  {r.lastError ? (
                    <>
                      <code>{r.lastError.code ?? "error"}</code> <span className="muted">{r.lastError.message}</span>
                    </>
                  ) : (
                    <span className="muted">{r.state === "processing" ? "no report before the lease ran out" : "—"}</span>
                  )}
                </td>
                {canResolve ? (
                  <td>
                    <button type="button" onClick={() => setDialogIds([r.id])} aria-label={`Resolve ${r.id}`}>
                      Resolve…
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {canResolve ? (
        <ResolveDialog
          tenant={tenant}
          operationIds={dialogIds ?? []}
          tools={toolsById}
          attempts={attemptsById}
          flags={flagsById}
          open={dialogIds !== null}
          actor={actor}
          onClose={() => setDialogIds(null)}
          onResolved={(result) => {
            setOutcome(result);
            setSelected(new Set());
            router.refresh();
          }}
        />
      ) : null}
    </div>
  );
}

function errorText(error: ReconcileRow["lastError"]): string | null {
  if (!error) return null;
  return [error.code, error.message].filter(Boolean).join(": ");
}
