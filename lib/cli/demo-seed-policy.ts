import { CliError } from "@/lib/cli/commands/run-command";

// Whether `npm start` seeds the demo tenant into an empty database. The demo is for a newcomer's
// first look: it prints an admin key, an agent key and a console password, and writes them to
// .tollgate/credentials. On the embedded database that is a terminal on the newcomer's own
// machine. A DATABASE_URL is where a deployment keeps its data, and its stdout is a log: secrets
// printed there outlive the terminal, and a production database would start with a tenant of
// fabricated operations and an all-tenants admin nobody asked for. So the demo is seeded on the
// embedded database unless TOLLGATE_DEMO=0, and on DATABASE_URL's only with TOLLGATE_DEMO=1.
export function shouldSeedDemo(options: { embedded: boolean; setting: string | undefined }): boolean {
  const setting = options.setting?.trim() ?? "";
  if (setting === "") return options.embedded;
  if (setting === "1") return true;
  if (setting === "0") return false;
  throw new CliError(`TOLLGATE_DEMO must be 1 (seed the demo tenant into an empty database) or 0 (never), not "${options.setting}"`);
}

// What an empty database without the demo needs next, printed instead of credentials.
export const firstTenantHelp = [
  "The database has no tenant yet (the demo tenant is seeded only on the embedded database, or with TOLLGATE_DEMO=1).",
  "Create the first tenant, an admin key and a console user:",
  "  npm run tollgate -- tenant create <slug> --name <name>",
  "  npm run tollgate -- api-key create --tenant <slug> --principal <name> --role admin",
  "  npm run tollgate -- user create --email <email> --role admin --all-tenants   (reads the password from stdin, or prints a generated one)",
].join("\n");
