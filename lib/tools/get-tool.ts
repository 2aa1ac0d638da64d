import type { Db } from "@/lib/db";
import { selectToolColumns } from "@/lib/tools/tool-columns";
import { toolView, type ToolRow, type ToolView } from "@/lib/tools/tool-view";

export async function getTool(options: { db: Db; tenantId: string; name: string }): Promise<ToolView | null> {
  const rows = await options.db.$queryRaw<ToolRow[]>`
    SELECT ${selectToolColumns} FROM tool WHERE tenant_id = ${options.tenantId} AND name = ${options.name}`;
  return rows[0] ? toolView(rows[0]) : null;
}

export async function listTools(options: { db: Db; tenantId: string }): Promise<ToolView[]> {
  const rows = await options.db.$queryRaw<ToolRow[]>`
    SELECT ${selectToolColumns} FROM tool WHERE tenant_id = ${options.tenantId} ORDER BY name`;
  return rows.map(toolView);
}
