"use client";

// Fifty row links that never prefetch, not even on hover (below): the one plain Link of the console.
// eslint-disable-next-line no-restricted-imports
import Link from "next/link";
import { dataTableColumnHelper } from "@/components/data-table/features";
import { StateBadge } from "@/components/ui/state-badge";
import { TimeAgo } from "@/components/ui/time-ago";

// One row as the server page hands it to the client: plain JSON (dates as ISO strings).
export type OperationListItem = {
  id: string;
  tool: string;
  principal: string;
  state: string;
  attemptCount: number;
  maxAttempts: number;
  conflictCount: number;
  mismatchCount: number;
  replayCount: number;
  createdAt: string;
  updatedAt: string;
  resourceId: string | null;
  workflowId: string | null;
  // First 16 hex characters of SHA-256(Idempotency-Key); the key itself is never stored.
  keyDigest: string;
  // Evidence contradicts the recorded outcome and no operator has cleared the flag.
  flagged: boolean;
};

const col = dataTableColumnHelper<OperationListItem>();

// Column ids double as the server's sort keys ("created", "updated"); every other column is
// not sortable, because only those two have an index that keyset pages can walk.
export function operationColumns(options: { tenant: string; now: number }) {
  const base = `/t/${options.tenant}/operations`;
  return col.columns([
    col.accessor("createdAt", {
      id: "created",
      header: "Created",
      meta: { label: "created", className: "c-time" },
      cell: (info) => <TimeAgo at={info.getValue()} now={options.now} />,
    }),
    col.accessor("id", {
      header: "Operation",
      enableSorting: false,
      meta: { className: "c-id" },
      cell: (info) => (
        // No prefetch: fifty row links would each render a trace on the server for nothing.
        <Link href={`${base}/${encodeURIComponent(info.getValue())}`} prefetch={false} className="mono" title={`${info.getValue()}: open the trace · key digest ${info.row.original.keyDigest}…`}>
          {info.getValue()}
        </Link>
      ),
    }),
    col.accessor("tool", { header: "Tool", enableSorting: false, meta: { className: "c-tool" } }),
    col.accessor("principal", { header: "Principal", enableSorting: false, meta: { className: "c-principal" } }),
    col.accessor("state", {
      header: "State",
      enableSorting: false,
      meta: { className: "c-state" },
      cell: (info) => (
        <span className="row">
          <StateBadge state={info.getValue()} />
          {info.row.original.flagged ? (
            <span className="badge danger" title="Evidence contradicts the recorded outcome: open the trace">
              flagged
            </span>
          ) : null}
        </span>
      ),
    }),
    col.accessor("attemptCount", {
      header: "Attempts",
      enableSorting: false,
      meta: { align: "right" },
      cell: (info) => (
        <span title={`${info.getValue()} of at most ${info.row.original.maxAttempts} attempts`}>
          {info.getValue()}
          <span className="muted">/{info.row.original.maxAttempts}</span>
        </span>
      ),
    }),
    col.accessor("conflictCount", {
      header: () => <span title="409, 422 and 429 answers to retries; mismatches are the 422s (same key, different arguments)">Conflicts</span>,
      enableSorting: false,
      meta: { align: "right", label: "conflicts" },
      cell: (info) => {
        const { conflictCount, mismatchCount } = info.row.original;
        if (conflictCount === 0) return <span className="muted">–</span>;
        return (
          <span className="row c-conflicts">
            {mismatchCount > 0 ? (
              <span className="badge danger" title={`${mismatchCount} with different arguments (422)`}>
                {mismatchCount} mismatch{mismatchCount === 1 ? "" : "es"}
              </span>
            ) : null}
            {/* The total beside the badge read "1 mismatch 1" (console review): shown when it adds something, and says what it counts. */}
            {mismatchCount === 0 ? <span>{conflictCount}</span> : mismatchCount < conflictCount ? <span title="409, 422 and 429 answers in all">{conflictCount} in all</span> : null}
          </span>
        );
      },
    }),
    col.accessor("replayCount", {
      header: () => <span title="Retries answered with the stored result (200 replay)">Replays</span>,
      enableSorting: false,
      meta: { align: "right", label: "replays" },
      cell: (info) => (info.getValue() === 0 ? <span className="muted">–</span> : info.getValue()),
    }),
    col.accessor("updatedAt", {
      id: "updated",
      header: "Updated",
      meta: { label: "updated", className: "c-time" },
      cell: (info) => <TimeAgo at={info.getValue()} now={options.now} />,
    }),
    col.accessor("resourceId", {
      header: "Resource",
      enableSorting: false,
      meta: { className: "c-ref" },
      cell: (info) => optionalCode(info.getValue()),
    }),
    col.accessor("workflowId", {
      header: "Workflow",
      enableSorting: false,
      meta: { className: "c-ref" },
      cell: (info) => optionalCode(info.getValue()),
    }),
  ]);
}

function optionalCode(value: string | null) {
  return value ? (
    <code title={value}>{value}</code>
  ) : (
    <span className="muted" aria-label="none">
      –
    </span>
  );
}
