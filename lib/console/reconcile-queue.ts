import type { Db } from "@/lib/db";

// Operations that need a person: unknown outcomes, and processing ones whose lease expired
// (nobody is working on them and nobody has declared them unknown yet).
export async function countReconcileQueue(options: { db: Db; tenantId: string }): Promise<number> {
  const rows = await options.db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM operation
    WHERE tenant_id = ${options.tenantId}
      AND (state = 'unknown' OR (state = 'processing' AND lease_expires_at < now()))`;
  return Number(rows[0]?.n ?? 0);
}
