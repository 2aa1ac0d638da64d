import type { Db } from "@/lib/db";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { createTenant } from "@/lib/tenants/create-tenant";
import { randomBytes } from "node:crypto";
import { putTool } from "@/lib/tools/put-tool";
import { createUser } from "@/lib/users/create-user";
import { demoTools } from "@/lib/seed/demo-tools";

export type DemoCredentials = { tenant: string; adminKey: string; agentKey: string; consoleEmail: string; consolePassword: string };

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
  const consoleEmail = "admin@demo.tollgate.local";
  const consolePassword = randomBytes(12).toString("base64url");
  await createUser({ db, actor, input: { email: consoleEmail, name: "Demo admin", role: "admin", allTenants: true, password: consolePassword } });
  return { tenant: tenant.slug, adminKey: admin.secret, agentKey: agent.secret, consoleEmail, consolePassword };
}
