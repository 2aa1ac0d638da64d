import { createApiKey } from "@/lib/api-keys/create-api-key";
import { listApiKeys, revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { findTenantBySlug } from "@/lib/tenants/create-tenant";
import type { Db } from "@/lib/db";
import { CliError, parseFlags, required } from "@/lib/cli/commands/run-command";
import { withDb } from "@/lib/cli/commands/with-db";

const subUsage = "usage: api-key create --tenant <slug> --principal <name> --role agent|approver|admin [--tools a,b] | api-key revoke <id> | api-key list --tenant <slug>";

export async function apiKeyCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "create") return create(rest);
  if (sub === "revoke") return revoke(rest);
  if (sub === "list") return list(rest);
  throw new CliError(subUsage);
}

async function create(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { tenant: { type: "string" }, principal: { type: "string" }, role: { type: "string" }, tools: { type: "string" } });
  const slug = required(values.tenant, "--tenant");
  const principal = required(values.principal, "--principal");
  const role = required(values.role, "--role");
  if (role !== "agent" && role !== "approver" && role !== "admin") throw new CliError(`--role must be agent, approver or admin, not "${role}"`);
  const tools = values.tools ? values.tools.split(",").map((t) => t.trim()).filter(Boolean) : [];
  const { key, secret } = await withDb(async (db) =>
    createApiKey({ db, tenantId: await tenantId(db, slug), input: { principal, role, tools }, actor: "cli" }),
  );
  process.stdout.write(`Created ${key.role} key ${key.id} for principal ${key.principal} in ${slug}${tools.length ? ` (tools: ${tools.join(", ")})` : ""}.\n`);
  process.stdout.write("The secret is shown once, on the next line; store it now.\n");
  process.stdout.write(`${secret}\n`);
  return 0;
}

async function revoke(args: string[]): Promise<number> {
  const { positionals } = parseFlags(args, {}, 1);
  const id = positionals[0];
  if (!id) throw new CliError("api-key revoke needs an <id>");
  const key = await withDb((db) => revokeApiKey({ db, id, actor: "cli" }));
  if (!key) throw new CliError(`no API key with id "${id}"`);
  process.stdout.write(`Revoked ${key.id} (${key.prefix}…, ${key.principal}) at ${key.revokedAt?.toISOString() ?? "?"}\n`);
  return 0;
}

async function list(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { tenant: { type: "string" } });
  const slug = required(values.tenant, "--tenant");
  const keys = await withDb(async (db) => listApiKeys({ db, tenantId: await tenantId(db, slug) }));
  for (const k of keys) {
    const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : "active";
    const used = k.lastUsedAt ? k.lastUsedAt.toISOString() : "never";
    process.stdout.write(`${k.id}\t${k.prefix}…\t${k.role}\t${k.principal}\t${k.tools.join(",") || "*"}\t${state}\tlast used ${used}\n`);
  }
  return 0;
}

async function tenantId(db: Db, slug: string): Promise<string> {
  const tenant = await findTenantBySlug({ db, slug });
  if (!tenant) throw new CliError(`no tenant with slug "${slug}"`);
  return tenant.id;
}
