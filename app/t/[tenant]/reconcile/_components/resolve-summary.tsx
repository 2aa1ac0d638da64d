"use client";

import { IntentLink } from "@/components/ui/intent-link";
import type { ResolveOutcome } from "@/components/resolve-dialog/resolve-dialog";
import { traceHref } from "@/lib/console/trace-origin";

const settled: Record<string, string> = { succeeded: "succeeded", failed: "failed", pending: "retry allowed" };
const bulkLabel: Record<string, string> = { succeeded: "succeeded", failed: "failed", retry: "retry allowed" };

// What the last resolve did: "N resolved as <outcome>, M skipped (already resolved by …)", with each row
// that was not resolved listed and linked, so nothing is silently dropped.
export function ResolveSummary({ outcome, tenant, onDismiss }: { outcome: ResolveOutcome; tenant: string; onDismiss: () => void }) {
  if (outcome.kind === "single") {
    return (
      <div className="notice row" role="status">
        <span>
          Resolved <IntentLink href={traceHref(tenant, outcome.operationId, "reconcile")} className="mono">{outcome.operationId}</IntentLink> as{" "}
          <strong>{settled[outcome.state] ?? outcome.state}</strong>. The trace and the audit log show it.
        </span>
        <button type="button" className="dismiss" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      </div>
    );
  }
  const r = outcome.result;
  const others = r.results.filter((row) => row.status !== "resolved");
  const by = [...new Set(others.flatMap((row) => (row.status === "skipped" && row.resolvedByLabel ? [row.resolvedByLabel] : [])))];
  // Skipped while still waiting for an outcome: changed since the rows were read (another attempt, a
  // flag raised), or not retryable; each row below says which.
  const changed = others.filter((row) => row.status === "skipped" && !row.resolvedByLabel && (row.state === "unknown" || row.state === "processing")).length;
  const why = [by.length ? `already resolved by ${by.join(", ")}` : null, changed ? `${changed} refused, see why below` : null].filter(Boolean);
  const parts = [
    `${r.resolved} resolved${r.resolved ? ` as ${bulkLabel[outcome.outcome]}` : ""}`,
    r.skipped ? `${r.skipped} skipped (${why.length ? why.join("; ") : "no longer resolvable"})` : null,
    r.notFound ? `${r.notFound} not found` : null,
    r.failed ? `${r.failed} failed` : null,
  ].filter(Boolean);
  return (
    <div className={`${others.length ? "notice warn-notice" : "notice"} stack`} role="status">
      <div className="row" style={{ justifyContent: "space-between" }}>
        <strong>{parts.join(", ")}.</strong>
        <button type="button" className="dismiss" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      </div>
      {others.length ? (
        <ul className="compact-list">
          {others.map((row) => (
            <li key={row.operationId}>
              <IntentLink href={traceHref(tenant, row.operationId, "reconcile")} className="mono">
                {row.operationId}
              </IntentLink>{" "}
              — {row.detail}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
