import type { Db } from "@/lib/db";

export type OperationFilterOptions = { tools: string[]; principals: string[] };

// The choices the operations table offers for its tool and principal filters: the tenant's
// registered tools, and the principals of its API keys (revoked ones too, since their
// operations remain). Both tables are small; the operation table is not scanned for this.
export async function listOperationFilterOptions(options: { db: Db; tenantId: string }): Promise<OperationFilterOptions> {
  const [tools, keys] = await Promise.all([
    options.db.tool.findMany({ where: { tenantId: options.tenantId }, select: { name: true }, orderBy: { name: "asc" } }),
    options.db.apiKey.findMany({ where: { tenantId: options.tenantId }, select: { principal: true }, distinct: ["principal"], orderBy: { principal: "asc" } }),
  ]);
  return { tools: tools.map((t) => t.name), principals: keys.map((k) => k.principal) };
}
