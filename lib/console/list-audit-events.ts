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

export type AuditPage = { rows: AuditRow[]; older: string | null; newer: string | null };

// One page of the tenant's audit log, newest first, keyset-paginated on id (ids only grow, so
// a page never shifts while new events arrive). Action and actor match by prefix ("operation."
// or "user:"); a target id is exact and uses the (tenant_id, target_type, target_id, id) index;
// a time range is bounded by (tenant_id, created_at).
export async function listAuditEvents(options: { db: Db; tenantId: string; query: AuditQuery; limit: number }): Promise<AuditPage> {
  const { query: q, limit } = options;
  const where: Prisma.Sql[] = [Prisma.sql`e.tenant_id = ${options.tenantId}`];
  if (q.action) where.push(Prisma.sql`e.action LIKE ${likePrefix(q.action)}`);
  if (q.actor) where.push(Prisma.sql`e.actor LIKE ${likePrefix(q.actor)}`);
  if (q.type) where.push(Prisma.sql`e.target_type = ${q.type}`);
  if (q.target) where.push(Prisma.sql`e.target_id = ${q.target}`);
  if (q.from) where.push(Prisma.sql`e.created_at >= ${q.from}`);
  if (q.to) where.push(Prisma.sql`e.created_at < ${q.to}`);
  // Going to newer events walks the index upwards, then the page is turned round.
  const towardsNewer = Boolean(q.after && !q.before);
  if (q.before) where.push(Prisma.sql`e.id < ${BigInt(q.before)}`);
  else if (q.after) where.push(Prisma.sql`e.id > ${BigInt(q.after)}`);
  const rows = await options.db.$queryRaw<
    { id: bigint; created_at: Date; actor: string; action: string; target_type: string; target_id: string; before: unknown; after: unknown; reason: string | null; key_principal: string | null; key_prefix: string | null }[]
  >`
    SELECT e.id, e.created_at, e.actor, e.action, e.target_type, e.target_id, e.before, e.after, e.reason,
      k.principal AS key_principal, k.prefix AS key_prefix
    FROM audit_event e
    LEFT JOIN api_key k ON e.actor LIKE 'api-key:%' AND k.id = substr(e.actor, 9) AND k.tenant_id = e.tenant_id
    WHERE ${Prisma.join(where, " AND ")}
    ORDER BY e.id ${towardsNewer ? Prisma.sql`ASC` : Prisma.sql`DESC`}
    LIMIT ${limit + 1}`;
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (towardsNewer) page.reverse();
  const first = page[0];
  const last = page.at(-1);
  // "Older" exists if we came from newer events or there are more below; "newer" if we paged down.
  const older = last && (towardsNewer || more) ? String(last.id) : null;
  const newer = first && (towardsNewer ? more : Boolean(q.before)) ? String(first.id) : null;
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
  };
}

function likePrefix(value: string): string {
  return `${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
