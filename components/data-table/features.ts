import {
  createColumnHelper,
  metaHelper,
  rowPaginationFeature,
  rowSelectionFeature,
  rowSortingFeature,
  tableFeatures,
  type ColumnDef,
  type RowData,
} from "@tanstack/react-table";

// How a column presents itself: numbers right-aligned, a class for widths, and the sort key
// the server understands when that differs from the column id.
export type DataTableColumnMeta = {
  align?: "right";
  className?: string;
  // Text of the header for screen readers when the visible header is abbreviated.
  label?: string;
};

// The features every data table registers, at module scope so they stay stable. Sorting,
// pagination and selection are all MANUAL: the server sorts and pages (keyset), the table
// only holds that state and renders. No client row models are registered on purpose.
export const dataTableFeatures = tableFeatures({
  rowSortingFeature,
  rowPaginationFeature,
  rowSelectionFeature,
  columnMeta: metaHelper<DataTableColumnMeta>(),
});

export type DataTableFeatures = typeof dataTableFeatures;

// Usage: const col = dataTableColumnHelper<Row>(); const columns = col.columns([col.accessor(...)]).
export function dataTableColumnHelper<TData extends RowData>() {
  return createColumnHelper<DataTableFeatures, TData>();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- columns of mixed value types, as TanStack's own helper returns them
export type DataTableColumns<TData extends RowData> = ColumnDef<DataTableFeatures, TData, any>[];
