import type { Db } from "@/lib/db";
import { isStorableText } from "@/lib/console/storable-text";

// Whether the tenant has this operation (another tenant's does not exist for you). An id
// PostgreSQL cannot take (U+0000) names none; sent as a parameter it would fail the page.
export async function operationExists(options: { db: Db; tenantId: string; operationId: string }): Promise<boolean> {
  if (!isStorableText(options.operationId)) return false;
  const rows = await options.db.$queryRaw<{ one: number }[]>`
    SELECT 1 AS one FROM operation WHERE id = ${options.operationId} AND tenant_id = ${options.tenantId}`;
  return rows.length > 0;
}
