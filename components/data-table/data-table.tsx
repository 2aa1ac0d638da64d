"use client";

import { useMemo, type MouseEvent, type ReactNode } from "react";
import { functionalUpdate, useTable, type RowData, type RowSelectionState, type SortingState } from "@tanstack/react-table";
import { dataTableColumnHelper, dataTableFeatures, type DataTableColumns } from "@/components/data-table/features";

export type DataTablePager = {
  // Links, so paging works with the keyboard, in a new tab and as a shared URL; `onNavigate`
  // (optional) takes over plain clicks, e.g. to run the navigation in a transition.
  prevHref: string | null;
  nextHref: string | null;
  onNavigate?: (href: string) => void;
  pageSize: number;
  pageSizes: readonly number[];
  onPageSizeChange: (size: number) => void;
  // "Rows 51–100 of 10,000+": whatever the caller can say cheaply.
  summary: ReactNode;
};

export type DataTableSelection<TData> = {
  state: RowSelectionState;
  onChange: (next: RowSelectionState) => void;
  // Names a row for its checkbox's label ("Select op_…").
  rowLabel: (row: TData) => string;
};

export type DataTableProps<TData extends RowData> = {
  // Keep `columns` and `data` referentially stable (module scope, useMemo, server props).
  columns: DataTableColumns<TData>;
  data: TData[];
  getRowId: (row: TData) => string;
  // The table's accessible name.
  label: string;
  sorting: SortingState;
  onSortingChange: (next: SortingState) => void;
  pager: DataTablePager;
  selection?: DataTableSelection<TData>;
  // Shown in the body when there are no rows.
  empty: ReactNode;
  // A server round trip is in flight: rows dim and assistive tech hears "busy".
  busy?: boolean;
  className?: string;
};

// A dense table over server-processed rows (TanStack Table v9, everything manual): the server
// filters, sorts and pages by keyset; this renders, reports sort clicks and page-size changes,
// and optionally keeps a row selection. Sortable headers are buttons with aria-sort on the
// header cell; each row carries at least one link (supplied by the columns), so Tab walks the rows.
export function DataTable<TData extends RowData>(props: DataTableProps<TData>) {
  const { selection, sorting, pager } = props;
  const columns = useMemo(() => (selection ? [selectionColumn<TData>(selection.rowLabel), ...props.columns] : props.columns), [selection?.rowLabel, props.columns]); // eslint-disable-line react-hooks/exhaustive-deps -- only the label function matters
  const rowSelection = selection?.state ?? emptySelection;
  const table = useTable({
    features: dataTableFeatures,
    columns,
    data: props.data,
    getRowId: (row) => props.getRowId(row),
    manualSorting: true,
    manualPagination: true,
    pageCount: -1,
    enableMultiSort: false,
    enableSortingRemoval: false,
    sortDescFirst: true,
    enableRowSelection: Boolean(selection),
    enableRowRangeSelection: true,
    state: { sorting, pagination: { pageIndex: 0, pageSize: pager.pageSize }, rowSelection },
    onSortingChange: (updater) => props.onSortingChange(functionalUpdate(updater, sorting)),
    onPaginationChange: (updater) => pager.onPageSizeChange(functionalUpdate(updater, { pageIndex: 0, pageSize: pager.pageSize }).pageSize),
    onRowSelectionChange: (updater) => selection?.onChange(functionalUpdate(updater, rowSelection)),
  });
  const rows = table.getRowModel().rows;
  const columnCount = table.getAllLeafColumns().length;

  return (
    <div className={`dt ${props.className ?? ""}`}>
      <div className="table-wrap dt-scroll" aria-busy={props.busy || undefined}>
        <table className={`data dt-table${props.busy ? " dt-busy" : ""}`} aria-label={props.label}>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => {
                  const meta = header.column.columnDef.meta;
                  const sorted = header.column.getIsSorted();
                  const canSort = header.column.getCanSort();
                  const ariaSort = !canSort ? undefined : sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : "none";
                  return (
                    <th key={header.id} scope="col" aria-sort={ariaSort} className={cellClass(meta)}>
                      {header.isPlaceholder ? null : canSort ? (
                        <button
                          type="button"
                          className="dt-sort"
                          onClick={header.column.getToggleSortingHandler()}
                          title={`Sort by ${meta?.label ?? header.column.id}, ${nextSortLabel(header.column.getNextSortingOrder())}`}
                        >
                          <table.FlexRender header={header} />
                          <span className="dt-sort-mark" aria-hidden="true">
                            {sorted === "asc" ? "▲" : sorted === "desc" ? "▼" : "↕"}
                          </span>
                        </button>
                      ) : (
                        <table.FlexRender header={header} />
                      )}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {rows.length === 0 ? (
              <tr className="dt-empty">
                <td colSpan={columnCount}>{props.empty}</td>
              </tr>
            ) : (
              rows.map((row) => (
                <tr key={row.id} aria-selected={selection ? row.getIsSelected() : undefined}>
                  {row.getAllCells().map((cell) => (
                    <td key={cell.id} className={cellClass(cell.column.columnDef.meta)}>
                      <table.FlexRender cell={cell} />
                    </td>
                  ))}
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
      <Pager pager={pager} onPageSize={(size) => table.setPageSize(size)} />
    </div>
  );
}

const emptySelection: RowSelectionState = {};

function Pager({ pager, onPageSize }: { pager: DataTablePager; onPageSize: (size: number) => void }) {
  const follow = (href: string) => (event: MouseEvent<HTMLAnchorElement>) => {
    if (!pager.onNavigate || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    pager.onNavigate(href);
  };
  return (
    <nav className="pager dt-pager" aria-label="Pages">
      <span role="status">{pager.summary}</span>
      <div className="row">
        <label className="dt-size">
          <span>Rows per page</span>
          <select value={pager.pageSize} onChange={(e) => onPageSize(Number(e.target.value))}>
            {pager.pageSizes.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
        {pager.prevHref ? (
          <a className="button" href={pager.prevHref} onClick={follow(pager.prevHref)} rel="prev">
            ← Previous
          </a>
        ) : (
          <span className="button" aria-disabled="true">
            ← Previous
          </span>
        )}
        {pager.nextHref ? (
          <a className="button" href={pager.nextHref} onClick={follow(pager.nextHref)} rel="next">
            Next →
          </a>
        ) : (
          <span className="button" aria-disabled="true">
            Next →
          </span>
        )}
      </div>
    </nav>
  );
}

function selectionColumn<TData extends RowData>(rowLabel: (row: TData) => string) {
  const col = dataTableColumnHelper<TData>();
  return col.display({
    id: "select",
    meta: { className: "dt-check", label: "Selection" },
    enableSorting: false,
    header: ({ table }) => (
      <input
        type="checkbox"
        aria-label="Select every row on this page"
        checked={table.getIsAllPageRowsSelected()}
        ref={(el) => {
          if (el) el.indeterminate = table.getIsSomePageRowsSelected() && !table.getIsAllPageRowsSelected();
        }}
        onChange={table.getToggleAllPageRowsSelectedHandler()}
      />
    ),
    cell: ({ row }) => (
      <input type="checkbox" aria-label={`Select ${rowLabel(row.original)}`} checked={row.getIsSelected()} disabled={!row.getCanSelect()} onChange={row.getToggleSelectedHandler()} />
    ),
  });
}

function cellClass(meta: { align?: "right"; className?: string } | undefined): string | undefined {
  const names = [meta?.align === "right" ? "num" : "", meta?.className ?? ""].filter(Boolean).join(" ");
  return names || undefined;
}

function nextSortLabel(next: false | "asc" | "desc"): string {
  return next === "asc" ? "ascending" : next === "desc" ? "descending" : "unsorted";
}
