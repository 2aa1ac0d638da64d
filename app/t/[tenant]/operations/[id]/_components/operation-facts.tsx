import { IntentLink } from "@/components/ui/intent-link";
import type { ReactNode } from "react";
import type { TraceOperation } from "@/lib/console/operation-trace";
import { TimeAgo } from "@/components/ui/time-ago";
import { CopyButton } from "@/components/ui/copy-button";

// The operation's header facts, dense: when, who, which keys, how busy. The raw idempotency
// key is never stored; only the start of its SHA-256 digest is shown.
// `base`: the tenant's console path (/t/{slug}); the workflow id links to its operations there.
export function OperationFacts({ op, now, base }: { op: TraceOperation; now: number; base: string }) {
  const when = (at: string | null) => (at ? <Stamp at={at} now={now} /> : null);
  const facts: [string, ReactNode, "wide"?][] = [
    ["Principal", op.principal],
    ["Tool", <code key="t">{op.tool}</code>],
    ["Attempts", `${op.attempts} of ${op.maxAttempts}`],
    ["Created", when(op.createdAt)],
    ["Updated", when(op.updatedAt)],
    ["Completed", when(op.completedAt)],
    // "Lease expires · 19 min ago" read as a mistake (console review).
    [op.leaseExpiresAt && Date.parse(op.leaseExpiresAt) <= now ? "Lease expired" : "Lease expires", op.state === "processing" ? when(op.leaseExpiresAt) : null],
    ["Not before", op.state === "pending" ? when(op.notBefore) : null],
    ["Result kept until", when(op.resultExpiresAt)],
    ["Key digest", <code key="k" title="SHA-256 of the Idempotency-Key (first 16 hex characters)">{op.keyDigest}…</code>],
    // What the provider calls the thing it made: the first fact an operator checks there (console review).
    ["Resource id", withCopy(resourceIdOf(op.result), "resource id")],
    ["Downstream key", withCopy(op.downstreamKey, "downstream key", "Passed to providers so they can dedupe"), "wide"],
    ["Fencing token", op.fencingToken ? <code key="f">{op.fencingToken}</code> : null],
    [
      "Workflow",
      op.workflowId ? (
        <>
          <IntentLink href={`${base}/operations?q=${encodeURIComponent(op.workflowId)}`} title={`Every operation of workflow ${op.workflowId}`}>
            <code>{op.workflowId}</code>
          </IntentLink>
          <CopyButton value={op.workflowId} label="workflow id" />
        </>
      ) : null,
      (op.workflowId?.length ?? 0) > 22 ? "wide" : undefined,
    ],
    ["Trace id", withCopy(op.traceId, "trace id"), "wide"],
    ["Conflicts", op.counts.conflicts ? `${op.counts.conflicts}${op.counts.mismatches ? ` (${op.counts.mismatches} × 422)` : ""}` : null],
    ["Replays", op.counts.replays ? String(op.counts.replays) : null],
    ["Takeovers", op.counts.takeovers ? String(op.counts.takeovers) : null],
    ["Heartbeats", op.counts.heartbeats ? String(op.counts.heartbeats) : null],
  ];
  return (
    <dl className="facts" aria-label="Operation details">
      {facts
        .filter(([, value]) => value !== null && value !== "")
        .map(([label, value, wide]) => (
          <div key={label} className={wide}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  );
}

// An id operators take to other systems (a provider's dashboard, logs, a ticket), with Copy.
function withCopy(value: string | null, label: string, title?: string): ReactNode {
  if (!value) return null;
  return (
    <>
      <code title={title}>{value}</code>
      <CopyButton value={value} label={label} />
    </>
  );
}

function Stamp({ at, now }: { at: string; now: number }) {
  return (
    <span title={at}>
      <TimeAgo at={at} now={now} />
    </span>
  );
}

function resourceIdOf(result: unknown): string | null {
  const id = (result as { resourceId?: unknown } | null)?.resourceId;
  return typeof id === "string" && id !== "" ? id : null;
}
