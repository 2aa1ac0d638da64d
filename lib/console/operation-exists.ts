import type { Db } from "@/lib/db";

// Whether the tenant has this operation (another tenant's does not exist for you).
export async function operationExists(options: { db: Db; tenantId: string; operationId: string }): Promise<boolean> {
  const rows = await options.db.$queryRaw<{ one: number }[]>`
    SELECT 1 AS one FROM operation WHERE id = ${options.operationId} AND tenant_id = ${options.tenantId}`;
  return rows.length > 0;
}
