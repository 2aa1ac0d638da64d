"use client";

import { useCallback, useMemo, useTransition, type ReactNode } from "react";
import { IntentLink } from "@/components/ui/intent-link";
import { useRouter } from "next/navigation";
import { useQueryStates } from "nuqs";
import type { SortingState } from "@tanstack/react-table";
import { DataTable } from "@/components/data-table/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import {
  hasEmptyTimeRange,
  hasOperationFilters,
  operationPageSizes,
  operationSortColumns,
  operationsPositionReset,
  operationsQueryParsers,
  viewQueryString,
  type OperationSortColumn,
} from "@/lib/console/operations-query";
import { operationColumns, type OperationListItem } from "./operation-columns";
import { KeyDigestFinder, SearchAsKey } from "./key-digest-finder";
import { focusCreatedFrom, OperationFilters } from "./operation-filters";
import { SavedViews, type SavedViewItem } from "./saved-views";

export type OperationsTotalView = { kind: "exact" | "at-least" | "estimate"; n: number } | null;

type Props = {
  tenant: string;
  now: number;
  rows: OperationListItem[];
  total: OperationsTotalView;
  firstRow: number;
  prevHref: string | null;
  nextHref: string | null;
  // The URL walked past the last row (a stale link): offer the first page.
  pastTheEnd: boolean;
  tools: string[];
  principals: string[];
  views: SavedViewItem[];
};

// The operations page's interactive part. The URL is the state: filters, sort and page size
// are nuqs query states with shallow: false, so every change re-renders the server page, which
// queries PostgreSQL and hands back one page of rows. Transitions keep the old rows on screen
// (dimmed, aria-busy) until the new ones arrive.
export function OperationsView(props: Props) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [query, setQuery] = useQueryStates(operationsQueryParsers, { shallow: false, startTransition });
  const columns = useMemo(() => operationColumns({ tenant: props.tenant, now: props.now }), [props.tenant, props.now]);
  const sorting = useMemo<SortingState>(() => [{ id: query.sort, desc: query.dir === "desc" }], [query.sort, query.dir]);
  const base = `/t/${props.tenant}/operations`;
  const filtered = hasOperationFilters(query);

  // Both the filters' hint and the empty table offer it; its button is then gone, so the keyboard
  // goes on from the first of the two dates.
  const swapDates = () => {
    void setQuery({ from: query.to, to: query.from, ...operationsPositionReset }, { history: "push" });
    focusCreatedFrom();
  };

  const onSortingChange = useCallback(
    (next: SortingState) => {
      const first = next[0];
      if (!first || !operationSortColumns.includes(first.id as OperationSortColumn)) return;
      void setQuery({ sort: first.id as OperationSortColumn, dir: first.desc ? "desc" : "asc", ...operationsPositionReset }, { history: "push" });
    },
    [setQuery],
  );

  const empty: ReactNode = props.pastTheEnd ? (
    <EmptyState title="No more operations here">
      The link points past the last row. <IntentLink href={`${base}?${viewQueryString(query)}`}>Go to the first page</IntentLink>.
    </EmptyState>
  ) : hasEmptyTimeRange(query) ? (
    <EmptyState title="The time range is empty">
      “Created from” is not before “created before”, so no operation can match.{" "}
      <button type="button" className="link-button" onClick={swapDates}>
        Swap the two dates
      </button>
    </EmptyState>
  ) : filtered ? (
    <EmptyState title="No operations match these filters">
      Try a wider time range or fewer filters, or <IntentLink href={base}>clear all filters</IntentLink>.
      {looksLikeRawKey(query.q) ? (
        <SearchAsKey tenant={props.tenant} text={query.q.trim()} onDigest={(q) => void setQuery({ q, ...operationsPositionReset }, { history: "replace" })} />
      ) : null}
    </EmptyState>
  ) : (
    <EmptyState title="No operations yet">
      Operations appear here when an agent claims a tool call: <code>POST /api/v1/operations</code> with an <code>Idempotency-Key</code> header.
    </EmptyState>
  );

  return (
    <div className="ops">
      <div className="ops-bar">
        <SavedViews tenant={props.tenant} views={props.views} current={viewQueryString(query)} />
        <KeyDigestFinder tenant={props.tenant} onDigest={(q) => void setQuery({ q, ...operationsPositionReset }, { history: "push" })} />
        {filtered ? (
          <IntentLink href={base} className="ops-clear">
            Clear filters
          </IntentLink>
        ) : null}
      </div>
      <OperationFilters query={query} setQuery={setQuery} tools={props.tools} principals={props.principals} busy={pending} onSwapDates={swapDates} />
      <DataTable
        label="Operations"
        columns={columns}
        data={props.rows}
        getRowId={getId}
        sorting={sorting}
        onSortingChange={onSortingChange}
        busy={pending}
        empty={empty}
        pager={{
          prevHref: props.prevHref,
          nextHref: props.nextHref,
          onNavigate: (href) => startTransition(() => router.push(href)),
          pageSize: query.size,
          pageSizes: operationPageSizes,
          onPageSizeChange: (size) => {
            const allowed = operationPageSizes.find((s) => s === size);
            if (allowed) void setQuery({ size: allowed, ...operationsPositionReset });
          },
          summary: <Summary count={props.rows.length} firstRow={props.firstRow} total={props.total} pending={pending} />,
        }}
      />
    </div>
  );
}

function getId(row: OperationListItem): string {
  return row.id;
}

const fmt = new Intl.NumberFormat("en-US");

function Summary({ count, firstRow, total, pending }: { count: number; firstRow: number; total: OperationsTotalView; pending: boolean }) {
  if (pending) return <>Loading…</>;
  if (count === 0) return <>No rows</>;
  const lastRow = firstRow + count - 1;
  const range = `${fmt.format(firstRow)}–${fmt.format(lastRow)}`;
  if (!total) return <>Rows {range}</>;
  // An estimate below what is already on screen says only "at least this many".
  const of =
    total.kind === "exact"
      ? fmt.format(total.n)
      : total.kind === "at-least" || total.n < lastRow
        ? `${fmt.format(Math.max(total.n, lastRow))}+`
        : `about ${fmt.format(roundEstimate(total.n))}`;
  const title = total.kind === "estimate" ? "The planner's estimate: these filters cannot be counted cheaply" : total.kind === "at-least" ? "Counting stops at 10,000" : undefined;
  return (
    <>
      Rows {range} of <span title={title}>{of}</span>
    </>
  );
}

function roundEstimate(n: number): number {
  if (n < 100) return n;
  const magnitude = 10 ** (Math.floor(Math.log10(n)) - 1);
  return Math.round(n / magnitude) * magnitude;
}

// A search text that is not an id of ours nor a digest: it may be a raw Idempotency-Key.
function looksLikeRawKey(q: string): boolean {
  const text = q.trim();
  return text !== "" && !/^(op|att|dk)_/.test(text) && !/^[0-9a-f]{8,64}$/i.test(text);
}
