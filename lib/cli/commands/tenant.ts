import { createTenant } from "@/lib/tenants/create-tenant";
import { CliError, parseFlags } from "@/lib/cli/commands/run-command";
import { withDb } from "@/lib/cli/commands/with-db";

export async function tenantCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "create") throw new CliError('usage: tenant create <slug> [--name <name>]');
  const { values, positionals } = parseFlags(rest, { name: { type: "string" } }, 1);
  const slug = positionals[0];
  if (!slug) throw new CliError("tenant create needs a <slug>");
  const tenant = await withDb((db) => createTenant({ db, slug, name: values.name, actor: "cli" }));
  process.stdout.write(`Created tenant ${tenant.slug} (${tenant.id})\n`);
  return 0;
}
