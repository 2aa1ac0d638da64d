import type { Db } from "@/lib/db";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { createTenant } from "@/lib/tenants/create-tenant";
import { randomBytes } from "node:crypto";
import { putTool } from "@/lib/tools/put-tool";
import { createUser } from "@/lib/users/create-user";
import { demoTools } from "@/lib/seed/demo-tools";
import { demoPeople, seedDemoOperations } from "@/lib/seed/seed-demo-operations";
import { serverSecret } from "@/lib/cli/local-secret";

export type DemoCredentials = { tenant: string; adminKey: string; agentKey: string; consoleEmail: string; consolePassword: string };

// Seeds only an empty database (no tenant at all), so a second `npm start` keeps everything.
// Two instances starting at once cannot both seed: the tenant slug is unique.
// The operations history is written with the server's secret (downstream keys are HMACs of it).
export async function seedDemo(options: { db: Db; secret?: string }): Promise<DemoCredentials | null> {
  const { db } = options;
  if ((await db.tenant.count()) > 0) return null;
  const setupStartedAt = new Date();
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
  const consoleEmail = demoPeople.admin.email;
  const consolePassword = randomBytes(12).toString("base64url");
  await createUser({ db, actor, input: { email: consoleEmail, name: demoPeople.admin.name, role: "admin", allTenants: true, password: consolePassword } });
  await seedDemoOperations({ db, tenant, demoAgentKeyId: agent.key.id, secret: options.secret ?? serverSecret(), setupStartedAt });
  return { tenant: tenant.slug, adminKey: admin.secret, agentKey: agent.secret, consoleEmail, consolePassword };
}
