import type { Db } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import type { AuditQuery } from "@/lib/console/audit-query";

export type AuditRow = {
  id: string;
  createdAt: string;
  actor: string;
  // For "api-key:<id>" actors, the key's principal and prefix, so a person can tell who it was.
  actorKey: { principal: string; prefix: string } | null;
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
  reason: string | null;
};

// `scannedTo`: set when the page stopped because SCAN_LIMIT events were read, not because the
// log ended; matches may continue below that id ("Older" carries on from there).
export type AuditPage = { rows: AuditRow[]; older: string | null; newer: string | null; scannedTo: string | null };

// Action and actor filters have no index of their own, so one page reads at most this many of
// the tenant's events (newest first from the cursor) and filters those: a rare action on a huge
// log costs a bounded scan per page instead of a scan of the whole log.
const SCAN_LIMIT = 20_000;

type SqlRow = {
  id: bigint;
  created_at: Date;
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
  reason: string | null;
  key_principal: string | null;
  key_prefix: string | null;
  scanned_to: bigint | null;
  scanned: bigint;
};

// One page of the tenant's audit log, newest first, keyset-paginated on id (ids only grow, so a
// page never shifts while new events arrive). A target (type + id) uses the index
// (tenant_id, target_type, target_id, id); action and actor match by prefix ("operation.",
// "user:") within a bounded scan; a time range is applied within the same scan.
export async function listAuditEvents(options: { db: Db; tenantId: string; query: AuditQuery; limit: number }): Promise<AuditPage> {
  const { query: q, limit } = options;
  // Going to newer events walks upwards, then the page is turned round.
  const towardsNewer = Boolean(q.after && !q.before);
  const scan: Prisma.Sql[] = [Prisma.sql`tenant_id = ${options.tenantId}`];
  if (q.type) scan.push(Prisma.sql`target_type = ${q.type}`);
  if (q.target) scan.push(Prisma.sql`target_id = ${q.target}`);
  if (q.from) scan.push(Prisma.sql`created_at >= ${q.from}`);
  if (q.to) scan.push(Prisma.sql`created_at < ${q.to}`);
  if (q.before) scan.push(Prisma.sql`id < ${BigInt(q.before)}`);
  else if (q.after) scan.push(Prisma.sql`id > ${BigInt(q.after)}`);
  const match: Prisma.Sql[] = [Prisma.sql`true`];
  if (q.action) match.push(Prisma.sql`e.action LIKE ${likePrefix(q.action)}`);
  if (q.actor) match.push(Prisma.sql`e.actor LIKE ${likePrefix(q.actor)}`);
  const bounded = Boolean(q.action || q.actor);
  const order = towardsNewer ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const rows = await options.db.$queryRaw<SqlRow[]>`
    WITH scanned AS (
      SELECT * FROM audit_event WHERE ${Prisma.join(scan, " AND ")}
      ORDER BY id ${order} LIMIT ${bounded ? SCAN_LIMIT : limit + 1}
    ), edge AS (SELECT ${towardsNewer ? Prisma.sql`max(id)` : Prisma.sql`min(id)`} AS scanned_to, count(*) AS scanned FROM scanned)
    SELECT e.id, e.created_at, e.actor, e.action, e.target_type, e.target_id, e.before, e.after, e.reason,
      k.principal AS key_principal, k.prefix AS key_prefix, edge.scanned_to, edge.scanned
    FROM edge LEFT JOIN scanned e ON ${Prisma.join(match, " AND ")}
    LEFT JOIN api_key k ON e.actor LIKE 'api-key:%' AND k.id = substr(e.actor, 9) AND k.tenant_id = e.tenant_id
    ORDER BY e.id ${order} LIMIT ${limit + 1}`;
  const edge = rows[0];
  const found = rows.filter((r) => r.id !== null);
  const more = found.length > limit;
  const page = found.slice(0, limit);
  // The scan hit its limit before the page filled: there may be matches further on.
  const cut = bounded && !more && Number(edge?.scanned ?? 0) >= SCAN_LIMIT && edge?.scanned_to != null ? String(edge.scanned_to) : null;
  if (towardsNewer) page.reverse();
  const first = page[0];
  const last = page.at(-1);
  // Older: below this page's last row (or below the scan's end); newer: above its first row.
  const older = towardsNewer ? (last ? String(last.id) : q.after ? String(BigInt(q.after) + 1n) : null) : more && last ? String(last.id) : cut;
  const newer = towardsNewer ? (more && first ? String(first.id) : cut) : !q.before ? null : first ? String(first.id) : String(BigInt(q.before) - 1n);
  return {
    rows: page.map((r) => ({
      id: String(r.id),
      createdAt: r.created_at.toISOString(),
      actor: r.actor,
      actorKey: r.key_principal && r.key_prefix ? { principal: r.key_principal, prefix: r.key_prefix } : null,
      action: r.action,
      targetType: r.target_type,
      targetId: r.target_id,
      before: r.before,
      after: r.after,
      reason: r.reason,
    })),
    older,
    newer,
    scannedTo: cut,
  };
}

function likePrefix(value: string): string {
  return `${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
