import { z } from "zod";
import type { Db } from "@/lib/db";
import { isStorableDate } from "@/lib/db/storable-date";
import { isStorableText } from "@/lib/console/storable-text";
import { Prisma } from "@/lib/generated/prisma/client";
import { operationsFirstPage, type OperationsQuery, type OperationSortColumn } from "@/lib/console/operations-query";

export type OperationRow = {
  id: string;
  tool: string;
  principal: string;
  state: string;
  attemptCount: number;
  maxAttempts: number;
  conflictCount: number;
  mismatchCount: number;
  replayCount: number;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  resourceId: string | null;
  workflowId: string | null;
  traceId: string | null;
  keyDigest: string;
  downstreamKey: string;
  errorCode: string | null;
  flagged: boolean;
};

// "exact": counted; "at-least": more than the cap, not counted further; "estimate": the
// planner's estimate, for filters no index can count cheaply (has-conflicts, or two of
// state/tool/principal at once).
export type OperationsTotal = { kind: "exact" | "at-least" | "estimate"; n: number };

// `now`: when the rows were read, so relative times ("3 min ago") render the same on server and client.
export type OperationsPage = { rows: OperationRow[]; nextCursor: string | null; prevCursor: string | null; total: OperationsTotal | null; now: Date };

export const COUNT_CAP = 10_000;

// Whitelisted sort columns → SQL. Nothing from the URL reaches the SQL text but these names.
const sortSql: Record<OperationSortColumn, Prisma.Sql> = { created: Prisma.raw("created_at"), updated: Prisma.raw("updated_at") };

// One page of a tenant's operations, filtered and sorted as the URL says, by keyset: the
// cursor is the (sort value, id) of the row the page continues from, so page 20,000 costs
// what page 1 costs (no OFFSET). `before` walks backwards and the rows are flipped back.
export async function listOperations(options: { db: Db; tenantId: string; query: OperationsQuery; limit?: number; count?: boolean }): Promise<OperationsPage> {
  const { db, query } = options;
  const limit = options.limit ?? query.size;
  const built = buildOperationsQuery({ tenantId: options.tenantId, query, limit });
  const [fetched, total] = await Promise.all([
    db.$queryRaw<RawRow[]>(built.page),
    options.count === false ? null : countOperations(db, built),
  ]);
  const more = fetched.length > limit;
  const rows = (more ? fetched.slice(0, limit) : fetched).map(toRow);
  if (built.backwards) {
    rows.reverse();
    // Walked back past the start: show a full first page instead of a short one.
    if (!more) return listOperations({ ...options, query: { ...query, ...operationsFirstPage } });
  }
  const cursorOf = (row: OperationRow | undefined) => (row ? operationsCursor(query, row) : null);
  const nextCursor = built.backwards || more ? cursorOf(rows.at(-1)) : null;
  const prevCursor = built.backwards ? (more ? cursorOf(rows[0]) : null) : built.cursor ? cursorOf(rows[0]) : null;
  // One page holds everything: that is the exact total, whatever the estimate said.
  const single = total && !nextCursor && !prevCursor ? { kind: "exact" as const, n: rows.length } : total;
  return { now: new Date(), rows, nextCursor, prevCursor, total: single };
}

export type BuiltOperationsQuery = { filter: Prisma.Sql; page: Prisma.Sql; count: Prisma.Sql; estimate: Prisma.Sql; countable: boolean; backwards: boolean; cursor: Cursor | null };

// The SQL of one page, exported for the benchmark's EXPLAIN and for the CSV export's batches.
export function buildOperationsQuery(options: { tenantId: string; query: OperationsQuery; limit: number }): BuiltOperationsQuery {
  const { query } = options;
  const where = filterSql(options.tenantId, query);
  // A search matches a handful of rows through its own indexes (a BitmapOr); fence it in a
  // materialized CTE so the planner never prefers walking the sort index while it filters
  // (it cannot estimate result->>'resourceId' and would, at a million rows, read them all).
  const q = query.q.trim();
  const search = q ? searchSql(q) : null;
  const head = search ? Prisma.sql`WITH matches AS MATERIALIZED (SELECT * FROM operation WHERE tenant_id = ${options.tenantId} AND ${search}) ` : Prisma.empty;
  const from = search ? Prisma.raw("matches") : Prisma.raw("operation");
  const backwards = Boolean(query.before) && !query.after;
  const cursor = decodeCursor(query, backwards ? query.before : query.after);
  const column = sortSql[query.sort];
  // Descending display order continues to smaller keys; walking backwards flips both.
  const descending = (query.dir === "desc") !== backwards;
  const order = descending ? Prisma.raw("DESC") : Prisma.raw("ASC");
  const keyset = cursor
    ? descending
      ? Prisma.sql` AND (${column}, id) < (${cursor.at}::timestamptz, ${cursor.id})`
      : Prisma.sql` AND (${column}, id) > (${cursor.at}::timestamptz, ${cursor.id})`
    : Prisma.empty;
  const page = Prisma.sql`${head}
    SELECT id, tool, principal, state::text AS state, attempt_count, max_attempts, conflict_count, mismatch_count, replay_count,
      created_at, updated_at, completed_at, result ->> 'resourceId' AS resource_id, workflow_id, trace_id, key_digest, downstream_key,
      error ->> 'code' AS error_code, flagged_at IS NOT NULL AS flagged
    FROM ${from}
    WHERE ${where}${keyset}
    ORDER BY ${column} ${order}, id ${order}
    LIMIT ${options.limit + 1}`;
  // Counting walks an index only when one index covers every filter; otherwise ask the planner.
  const equalities = [query.state.length > 0, Boolean(query.tool.trim()), Boolean(query.principal.trim())].filter(Boolean).length;
  const countable = Boolean(search) || (!query.conflicts && equalities <= 1);
  return {
    filter: search ? Prisma.sql`${where} AND ${search}` : where,
    page,
    count: Prisma.sql`${head}SELECT count(*)::int AS n FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT ${COUNT_CAP + 1}) s`,
    estimate: Prisma.sql`EXPLAIN (FORMAT JSON) SELECT 1 FROM operation WHERE ${where}`,
    countable,
    backwards,
    cursor,
  };
}

async function countOperations(db: Db, built: BuiltOperationsQuery): Promise<OperationsTotal> {
  if (built.countable) {
    const [row] = await db.$queryRaw<{ n: number }[]>(built.count);
    const n = row?.n ?? 0;
    return n > COUNT_CAP ? { kind: "at-least", n: COUNT_CAP } : { kind: "exact", n };
  }
  const [row] = await db.$queryRaw<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }[]>(built.estimate);
  return { kind: "estimate", n: Math.round(row?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? 0) };
}

function filterSql(tenantId: string, query: OperationsQuery): Prisma.Sql {
  const parts = [Prisma.sql`tenant_id = ${tenantId}`];
  // One state is an equality, so the (tenant_id, state, created_at) index also yields the order.
  const [onlyState] = query.state;
  if (query.state.length === 1 && onlyState) parts.push(Prisma.sql`state = ${onlyState}::operation_state`);
  else if (query.state.length > 1) parts.push(Prisma.sql`state = ANY (${query.state}::operation_state[])`);
  if (query.tool.trim()) parts.push(Prisma.sql`tool = ${query.tool.trim()}`);
  if (query.principal.trim()) parts.push(Prisma.sql`principal = ${query.principal.trim()}`);
  if (query.from) parts.push(Prisma.sql`created_at >= ${query.from}::timestamptz`);
  if (query.to) parts.push(Prisma.sql`created_at < ${query.to}::timestamptz`);
  if (query.conflicts) parts.push(Prisma.sql`conflict_count > 0`);
  // Served by the partial index operation_flagged_idx (a handful of rows per tenant).
  if (query.flagged) parts.push(Prisma.sql`flagged_at IS NOT NULL`);
  return Prisma.join(parts, " AND ");
}

// The search box: an operation id, a downstream key, a resource id, a workflow id, or a key
// digest or its hex prefix (8+ characters). Not the raw Idempotency-Key: typed here it would travel in the URL,
// browser history and saved views, and raw keys are never stored or logged (the page's "Find by
// Idempotency-Key" POSTs a raw key to /api/console/{tenant}/operations/key-digest and searches
// the digest it gets back). Each arm has an
// index; PostgreSQL ORs the bitmaps.
// The other filters apply on top of the matches.
export function searchSql(q: string): Prisma.Sql {
  const arms = [Prisma.sql`id = ${q}`, Prisma.sql`downstream_key = ${q}`, Prisma.sql`(result ->> 'resourceId') = ${q}`, Prisma.sql`workflow_id = ${q}`];
  const hex = q.toLowerCase();
  if (/^[0-9a-f]{64}$/.test(hex)) arms.push(Prisma.sql`key_digest = ${hex}`);
  // Every digest starting with the prefix sorts between the prefix and prefix + "g" (hex only).
  else if (/^[0-9a-f]{8,63}$/.test(hex)) arms.push(Prisma.sql`(key_digest >= ${hex} AND key_digest < ${`${hex}g`})`);
  return Prisma.sql`(${Prisma.join(arms, " OR ")})`;
}

type Cursor = { at: string; id: string };

// A cursor names its sort, so a link whose sort was edited by hand starts again at page 1.
const cursorSchema = z.tuple([
  z.enum(["created", "updated"]),
  z.enum(["asc", "desc"]),
  z.iso.datetime().refine((at) => isStorableDate(new Date(at))),
  // An id PostgreSQL cannot take (U+0000, from a hand-made cursor) would fail the page.
  z.string().min(1).max(100).refine(isStorableText),
]);

// Exported for the benchmark, which starts its deep pages from a row it picked.
export function operationsCursor(query: OperationsQuery, row: Pick<OperationRow, "id" | "createdAt" | "updatedAt">): string {
  const at = query.sort === "updated" ? row.updatedAt : row.createdAt;
  return Buffer.from(JSON.stringify([query.sort, query.dir, at.toISOString(), row.id])).toString("base64url");
}

function decodeCursor(query: OperationsQuery, value: string | null): Cursor | null {
  if (!value) return null;
  try {
    const parsed = cursorSchema.safeParse(JSON.parse(Buffer.from(value, "base64url").toString("utf8")));
    if (!parsed.success) return null;
    const [sort, dir, at, id] = parsed.data;
    return sort === query.sort && dir === query.dir ? { at, id } : null;
  } catch {
    return null;
  }
}

type RawRow = {
  id: string;
  tool: string;
  principal: string;
  state: string;
  attempt_count: number;
  max_attempts: number;
  conflict_count: number;
  mismatch_count: number;
  replay_count: number;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  resource_id: string | null;
  workflow_id: string | null;
  trace_id: string | null;
  key_digest: string;
  downstream_key: string;
  error_code: string | null;
  flagged: boolean;
};

function toRow(r: RawRow): OperationRow {
  return {
    id: r.id,
    tool: r.tool,
    principal: r.principal,
    state: r.state,
    attemptCount: r.attempt_count,
    maxAttempts: r.max_attempts,
    conflictCount: r.conflict_count,
    mismatchCount: r.mismatch_count,
    replayCount: r.replay_count,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    completedAt: r.completed_at,
    resourceId: r.resource_id,
    workflowId: r.workflow_id,
    traceId: r.trace_id,
    keyDigest: r.key_digest,
    downstreamKey: r.downstream_key,
    errorCode: r.error_code,
    flagged: r.flagged,
  };
}
