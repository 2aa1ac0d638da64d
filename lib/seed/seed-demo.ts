import type { Db } from "@/lib/db";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { createTenant } from "@/lib/tenants/create-tenant";
import { putTool } from "@/lib/tools/put-tool";
import { demoTools } from "@/lib/seed/demo-tools";

export type DemoCredentials = { tenant: string; adminKey: string; agentKey: string };

// Seeds only an empty database (no tenant at all), so a second `npm start` keeps everything.
// Two instances starting at once cannot both seed: the tenant slug is unique.
export async function seedDemo(options: { db: Db }): Promise<DemoCredentials | null> {
  const { db } = options;
  if ((await db.tenant.count()) > 0) return null;
  const actor = "system:seed";
  let tenant;
  try {
    tenant = await createTenant({ db, slug: "demo", name: "Demo tenant", actor });
  } catch {
    return null; // another instance seeded first
  }
  const admin = await createApiKey({ db, tenantId: tenant.id, input: { principal: "demo-admin", role: "admin" }, actor });
  const agent = await createApiKey({ db, tenantId: tenant.id, input: { principal: "demo-agent", role: "agent" }, actor });
  for (const [name, definition] of Object.entries(demoTools)) {
    await putTool({ db, tenantId: tenant.id, name, definition, actor });
  }
  return { tenant: tenant.slug, adminKey: admin.secret, agentKey: agent.secret };
}
