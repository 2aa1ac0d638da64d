import {
  createLoader,
  createParser,
  createSerializer,
  parseAsArrayOf,
  parseAsInteger,
  parseAsNumberLiteral,
  parseAsStringLiteral,
  type inferParserType,
  type Nullable,
} from "nuqs/server";
import { parseAsStorableDateTime } from "@/lib/db/storable-date";
import { cutText, isStorableText } from "@/lib/console/storable-text";

// The operations table's URL: every filter, the sort, the page size and the keyset cursor
// live in the query string, so a view is a link. One parser map serves the server page
// (createLoader over searchParams), the CSV export (over the request URL), the saved views
// (normalised through the serializer) and the client table (useQueryStates). Values that do
// not parse are dropped, never passed on: column ids and states come from fixed lists.
// No Prisma here: this module is bundled into the client too.

export const operationStates = ["awaiting_approval", "pending", "processing", "succeeded", "failed", "unknown", "rejected"] as const;
export type OperationStateName = (typeof operationStates)[number];

// The whitelist of sortable columns: each has an index that keyset pages walk (tenant_id, column).
export const operationSortColumns = ["created", "updated"] as const;
export type OperationSortColumn = (typeof operationSortColumns)[number];

export const operationPageSizes = [25, 50, 100, 200] as const;

// Free text from the URL: bounded, and blank means absent. Not trimmed here (the search box
// is bound to this value while someone types a space); the query trims. Text PostgreSQL cannot
// take (U+0000) is absent too: it matches nothing, and as a parameter it failed the page.
const parseAsText = (maxLength: number) =>
  createParser({
    parse: (value: string) => {
      const text = cutText(value, maxLength);
      return text.trim() && isStorableText(text) ? text : null;
    },
    serialize: (value: string) => value,
  });

// A checkbox filter. Written as "true"; read from the spellings people type or other tools write
// ("1", "yes", "on"), since nuqs's parseAsBoolean took `?flagged=1` as false and silently showed
// every operation (console review). Anything else is absent, as with every value that does not parse.
const parseAsFlag = createParser({
  parse: (value: string) => {
    const v = value.trim().toLowerCase();
    return v === "true" || v === "1" || v === "yes" || v === "on" ? true : v === "false" || v === "0" || v === "no" || v === "off" ? false : null;
  },
  serialize: (value: boolean) => String(value),
});

export const operationsQueryParsers = {
  q: parseAsText(200).withDefault(""),
  state: parseAsArrayOf(parseAsStringLiteral(operationStates)).withDefault([]),
  tool: parseAsText(100).withDefault(""),
  principal: parseAsText(200).withDefault(""),
  from: parseAsStorableDateTime,
  to: parseAsStorableDateTime,
  conflicts: parseAsFlag.withDefault(false),
  // Flagged: evidence contradicts the recorded outcome (a webhook, an attempt's late report) and no
  // operator has cleared the flag yet.
  flagged: parseAsFlag.withDefault(false),
  sort: parseAsStringLiteral(operationSortColumns).withDefault("created"),
  dir: parseAsStringLiteral(["asc", "desc"] as const).withDefault("desc"),
  size: parseAsNumberLiteral(operationPageSizes).withDefault(50),
  // Keyset cursors (opaque; decoded and validated by lib/console/list-operations.ts).
  after: parseAsText(300),
  before: parseAsText(300),
  // Display only ("rows 101–150"); the cursor decides which rows are shown.
  page: parseAsInteger.withDefault(1),
};

export type OperationsQuery = inferParserType<typeof operationsQueryParsers>;
// A change to some of the query's keys (null clears a key back to its default).
export type OperationsQueryPatch = Partial<Nullable<OperationsQuery>>;

export const loadOperationsQuery = createLoader(operationsQueryParsers);
export const serializeOperationsQuery = createSerializer(operationsQueryParsers);

// The params that choose WHICH rows (as opposed to where in them we are): a saved view or an
// export carries these; a change to any of them sends the table back to its first page.
export const operationsViewKeys = ["q", "state", "tool", "principal", "from", "to", "conflicts", "flagged", "sort", "dir", "size"] as const;
// For nuqs setters and the serializer (null clears a key) ...
export const operationsPositionReset = { after: null, before: null, page: null } as const;
// ... and for a parsed query value (the first page).
export const operationsFirstPage = { after: null, before: null, page: 1 } as const;

// The query string of the view without its position, normalised (unknown keys and invalid
// values dropped, defaults omitted): what saved views store and exports receive.
export function viewQueryString(query: OperationsQuery): string {
  return serializeOperationsQuery({ ...query, ...operationsPositionReset }).replace(/^\?/, "");
}

export function hasOperationFilters(query: OperationsQuery): boolean {
  return Boolean(query.q || query.state.length || query.tool || query.principal || query.from || query.to || query.conflicts || query.flagged);
}

// "Created from" at or after "created before": no row can match (the range is [from, to)).
export function hasEmptyTimeRange(query: Pick<OperationsQuery, "from" | "to">): boolean {
  return Boolean(query.from && query.to && query.from.getTime() >= query.to.getTime());
}
