import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db";
import { rankCandidates, type InboxCandidate, type CandidateOperation } from "@/lib/console/rank-webhook-candidates";
import { isStorableText } from "@/lib/console/storable-text";
import type { InboxStatus, InboxView } from "@/lib/console/inbox-query";

// The inbox: verified webhook events nobody could act on automatically — unmatched (no
// operation of the tenant has the correlation value), unmapped (the event type maps to no
// outcome) and contradicting (the settled outcome disagrees) — newest first, each with the
// operations an operator may mean (see rank-webhook-candidates.ts).

export { inboxStatuses, type InboxStatus } from "@/lib/console/inbox-query";

// Who decided a handled event, when, and why (the ignore's reason, or the match's note).
export type InboxDecision = { by: string; at: string; reason: string | null };

export type InboxEvent = {
  id: string;
  connectionName: string;
  eventType: string;
  providerEventId: string;
  // "matched" and "ignored" only in the handled view.
  status: InboxStatus | "matched" | "ignored";
  decision: InboxDecision | null;
  outcome: "succeeded" | "failed" | null;
  correlationValue: string | null;
  operationId: string | null;
  operationState: string | null;
  receivedAt: string;
  payload: unknown;
  payloadPrunedAt: string | null;
  candidates: InboxCandidate[];
};

// The position after the last event shown: its received time, or in the handled view its decision's.
export type InboxCursor = { at: string; id: string };

const statusList = Prisma.sql`('unmatched', 'unmapped', 'contradicting')`;

// What an operator narrows the inbox to: why the events are there, which connection they came
// through, and one value found exactly in the event's id, the provider's event id, the
// correlation value or the event type (what a provider's dashboard, a ticket or an executor's
// log gives them to look for). Exact matches keep the search on the inbox's own rows; the inbox
// holds what nobody acted on, not the whole event history.
export type InboxFilter = { status?: InboxView | null; connection?: string | null; q?: string | null };

const handled = (filter: InboxFilter | undefined) => filter?.status === "handled";

// Which events a view holds: those waiting for a person, or (handled) those a person decided; an
// event matched automatically was never the inbox's. Both ride an index: (tenant, status,
// received_at), and a partial one on decisions (migration 20261201110000).
function scopeSql(filter: InboxFilter | undefined): Prisma.Sql {
  return handled(filter) ? Prisma.sql`e.decided_by IS NOT NULL` : Prisma.sql`e.status IN ${statusList}`;
}

// Null when the filter can match nothing: text PostgreSQL cannot hold (U+0000, a lone
// surrogate) names no stored event, and sending it would fail the page.
function filterSql(tenantId: string, filter: InboxFilter | undefined): Prisma.Sql | null {
  const parts: Prisma.Sql[] = [];
  if (filter?.status && !handled(filter)) parts.push(Prisma.sql`AND e.status = ${filter.status}::webhook_event_status`);
  if (filter?.connection) {
    if (!isStorableText(filter.connection)) return null;
    parts.push(Prisma.sql`AND e.connection_id IN (SELECT id FROM webhook_connection WHERE tenant_id = ${tenantId} AND name = ${filter.connection})`);
  }
  if (filter?.q) {
    if (!isStorableText(filter.q)) return null;
    const q = filter.q;
    parts.push(Prisma.sql`AND (e.id = ${q} OR e.provider_event_id = ${q} OR e.correlation_value = ${q} OR e.event_type = ${q})`);
  }
  return parts.length ? Prisma.join(parts, " ") : Prisma.empty;
}

export async function countInbox(options: { db: Db; tenantId: string; cap?: number; filter?: InboxFilter }): Promise<number> {
  const where = filterSql(options.tenantId, options.filter);
  if (!where) return 0;
  const limit = options.cap === undefined ? Prisma.empty : Prisma.sql`LIMIT ${options.cap}`;
  const rows = await options.db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM (SELECT 1 FROM webhook_event e WHERE e.tenant_id = ${options.tenantId} AND ${scopeSql(options.filter)} ${where} ${limit}) q`;
  return Number(rows[0]?.n ?? 0);
}

export type InboxFacets = { byStatus: Record<InboxStatus, number>; handled: number; connections: { name: string; count: number }[] };

// How many events wait for each reason and behind each connection (the whole inbox, whatever
// the filter), and how many a person has decided: the counts the filter's choices show.
// `handled`: the connections' counts are of the handled view's events (console review: the
// handled view offered waiting counts, and no connection whose events were all decided).
export async function inboxFacets(options: { db: Db; tenantId: string; handled?: boolean }): Promise<InboxFacets> {
  const [rows, decided] = await Promise.all([
    options.db.$queryRaw<{ name: string; status: InboxStatus; n: bigint }[]>`
      SELECT c.name, e.status::text AS status, count(*) AS n
      FROM webhook_event e JOIN webhook_connection c ON c.id = e.connection_id
      WHERE e.tenant_id = ${options.tenantId} AND e.status IN ${statusList}
      GROUP BY c.name, e.status`,
    options.db.$queryRaw<{ name: string; n: bigint }[]>`
      SELECT c.name, count(*) AS n
      FROM webhook_event e JOIN webhook_connection c ON c.id = e.connection_id
      WHERE e.tenant_id = ${options.tenantId} AND e.decided_by IS NOT NULL
      GROUP BY c.name`,
  ]);
  const byStatus: Record<InboxStatus, number> = { unmatched: 0, unmapped: 0, contradicting: 0 };
  const waiting = new Map<string, number>();
  for (const r of rows) {
    byStatus[r.status] += Number(r.n);
    waiting.set(r.name, (waiting.get(r.name) ?? 0) + Number(r.n));
  }
  const handledCount = decided.reduce((n, r) => n + Number(r.n), 0);
  const byConnection = options.handled ? new Map(decided.map((r) => [r.name, Number(r.n)])) : waiting;
  const connections = [...byConnection].map(([name, count]) => ({ name, count })).sort((a, b) => a.name.localeCompare(b.name));
  return { byStatus, handled: handledCount, connections };
}

type EventRow = {
  id: string;
  connection_id: string;
  connection_name: string;
  event_type: string;
  provider_event_id: string;
  status: InboxEvent["status"];
  outcome: "succeeded" | "failed" | null;
  correlation_value: string | null;
  operation_id: string | null;
  operation_state: string | null;
  received_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
  reason: string | null;
  payload: unknown;
  payload_pruned_at: Date | null;
};

type PoolRow = { id: string; tool: string; state: string; principal: string; created_at: Date; resource_id: string | null; attempt_count: number; flagged_at: Date | null; flag_reason: string | null };

// How much of a candidate's arguments the inbox shows. Read for the candidates shown only, after
// ranking (args may be 64 KiB each; the pool holds up to 500 operations; code review).
const ARGS_PREVIEW_CHARS = 160;

// How far before an event an operation may have started and still be a candidate.
const WINDOW_DAYS = 7;
// How many of a connection's latest matched events say which tool families it is about.
const FAMILY_SAMPLE = 200;

// Tool families the connections' events matched lately: what each one's provider is about. Its
// latest matched events, not its whole history: this runs on every load of a page that refreshes
// itself (with 500k matched events, 500 ms a load before, 2 ms since). Exported for the console
// bench's EXPLAIN.
export function connectionFamiliesSql(tenantId: string, connectionIds: string[]): Prisma.Sql {
  return Prisma.sql`
    SELECT DISTINCT c.id AS connection_id, split_part(o.tool, '.', 1) AS family
    FROM unnest(${connectionIds}::text[]) AS c(id)
    CROSS JOIN LATERAL (
      SELECT e.operation_id FROM webhook_event e
      WHERE e.tenant_id = ${tenantId} AND e.connection_id = c.id AND e.status = 'matched'
      ORDER BY e.received_at DESC LIMIT ${FAMILY_SAMPLE}) m
    JOIN operation o ON o.id = m.operation_id AND o.tenant_id = ${tenantId}`;
}

export async function listInbox(options: {
  db: Db;
  tenantId: string;
  limit?: number;
  before?: InboxCursor | null;
  filter?: InboxFilter;
}): Promise<{ events: InboxEvent[]; next: InboxCursor | null; now: number }> {
  const { db, tenantId } = options;
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 200);
  const where = filterSql(tenantId, options.filter);
  if (!where) return { events: [], next: null, now: Date.now() };
  const beforeAt = options.before?.at ?? "infinity";
  const beforeId = options.before?.id ?? "";
  const byDecision = handled(options.filter);
  // Set with decided_by by every decision (tollgate_webhook_match, tollgate_webhook_ignore).
  const at = byDecision ? Prisma.sql`e.decided_at` : Prisma.sql`e.received_at`;
  const rows = await db.$queryRaw<EventRow[]>`
    SELECT e.id, e.connection_id, c.name AS connection_name, e.event_type, e.provider_event_id, e.status::text AS status, e.outcome,
      e.correlation_value, e.operation_id, o.state::text AS operation_state, e.received_at, e.payload, e.payload_pruned_at,
      e.decided_by, e.decided_at, e.reason
    FROM webhook_event e
    JOIN webhook_connection c ON c.id = e.connection_id
    LEFT JOIN operation o ON o.id = e.operation_id AND o.tenant_id = e.tenant_id
    WHERE e.tenant_id = ${tenantId} AND ${scopeSql(options.filter)} ${where}
      AND (${at}, e.id) < (${beforeAt}::timestamptz, ${options.before ? beforeId : "~"})
    ORDER BY ${at} DESC, e.id DESC LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const lastAt = byDecision ? last?.decided_at : last?.received_at;
  const next = rows.length > limit && last && lastAt ? { at: lastAt.toISOString(), id: last.id } : null;
  if (page.length === 0) return { events: [], next, now: Date.now() };

  const connectionIds = [...new Set(page.map((e) => e.connection_id))];
  const oldest = new Date(Math.min(...page.map((e) => e.received_at.getTime())) - WINDOW_DAYS * 86_400_000);
  const newest = new Date(Math.max(...page.map((e) => e.received_at.getTime())) + 3_600_000);
  const named = page.map((e) => e.operation_id).filter((id): id is string => id !== null);
  const [families, pool, namedOps] = await Promise.all([
    db.$queryRaw<{ connection_id: string; family: string }[]>(connectionFamiliesSql(tenantId, connectionIds)),
    // Operations still waiting for an outcome around those times (the reconcile queue's partial index).
    db.$queryRaw<PoolRow[]>`
      SELECT o.id, o.tool, o.state::text AS state, o.principal, o.created_at, o.attempt_count, o.flagged_at, o.flag_reason,
        coalesce(o.result ->> 'resourceId', (SELECT a.provider ->> 'resourceId' FROM attempt a
          WHERE a.tenant_id = o.tenant_id AND a.operation_id = o.id AND a.provider ->> 'resourceId' IS NOT NULL
          ORDER BY a.number DESC LIMIT 1),
        (SELECT s.provider_resource_id FROM side_effect s
          WHERE s.tenant_id = o.tenant_id AND s.operation_id = o.id AND s.provider_resource_id IS NOT NULL
          ORDER BY s.updated_at DESC LIMIT 1)) AS resource_id
      FROM operation o
      WHERE o.tenant_id = ${tenantId} AND o.state IN ('unknown', 'processing')
        AND o.created_at BETWEEN ${oldest.toISOString()}::timestamptz AND ${newest.toISOString()}::timestamptz
      ORDER BY o.created_at DESC LIMIT 500`,
    named.length
      ? db.$queryRaw<PoolRow[]>`
          SELECT o.id, o.tool, o.state::text AS state, o.principal, o.created_at, o.attempt_count, o.flagged_at, o.flag_reason, o.result ->> 'resourceId' AS resource_id
          FROM operation o WHERE o.tenant_id = ${tenantId} AND o.id IN (${Prisma.join(named)})`
      : Promise.resolve([] as PoolRow[]),
  ]);
  const familiesOf = new Map<string, Set<string>>();
  for (const f of families) familiesOf.set(f.connection_id, (familiesOf.get(f.connection_id) ?? new Set()).add(f.family));
  const toCandidate = (r: PoolRow): CandidateOperation => ({
    id: r.id,
    tool: r.tool,
    state: r.state,
    principal: r.principal,
    createdAt: r.created_at,
    resourceId: r.resource_id,
    attempts: r.attempt_count,
    flag: r.flagged_at ? { at: r.flagged_at, reason: r.flag_reason ?? "" } : null,
  });
  const candidatePool = pool.map(toCandidate);
  const namedById = new Map(namedOps.map((r) => [r.id, toCandidate(r)]));

  const events = page.map((e) => ({
    id: e.id,
    connectionName: e.connection_name,
    eventType: e.event_type,
    providerEventId: e.provider_event_id,
    status: e.status,
    outcome: e.outcome,
    correlationValue: e.correlation_value,
    operationId: e.operation_id,
    operationState: e.operation_state,
    receivedAt: e.received_at.toISOString(),
    payload: e.payload,
    payloadPrunedAt: e.payload_pruned_at?.toISOString() ?? null,
    decision: e.decided_by && e.decided_at ? { by: e.decided_by, at: e.decided_at.toISOString(), reason: e.reason } : null,
    // A matched event is settled; an ignored one may still be matched (a mistaken ignore).
    candidates: e.status === "matched" ? [] : rankCandidates({
      event: { receivedAt: e.received_at, eventType: e.event_type, connectionName: e.connection_name, payload: e.payload },
      named: e.operation_id ? (namedById.get(e.operation_id) ?? null) : null,
      families: familiesOf.get(e.connection_id) ?? new Set(),
      pool: candidatePool,
    }),
  }));
  const previews = await argsPreviews(db, tenantId, [...new Set(events.flatMap((e) => e.candidates.map((c) => c.id)))]);
  for (const e of events) for (const c of e.candidates) c.argsPreview = previews.get(c.id) ?? null;
  return {
    events,
    next,
    now: Date.now(),
  };
}

// The start of each shown candidate's arguments as JSON (cut in SQL), for telling them apart.
async function argsPreviews(db: Db, tenantId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.$queryRaw<{ id: string; preview: string }[]>`
    SELECT id, left(args::text, ${ARGS_PREVIEW_CHARS + 1}) AS preview FROM operation WHERE tenant_id = ${tenantId} AND id IN (${Prisma.join(ids)})`;
  return new Map(rows.map((r) => [r.id, r.preview.length > ARGS_PREVIEW_CHARS ? `${r.preview.slice(0, ARGS_PREVIEW_CHARS)}…` : r.preview]));
}
