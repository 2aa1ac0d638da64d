import { randomBytes } from "node:crypto";
import { createUser } from "@/lib/users/create-user";
import { CliError, parseFlags, required } from "@/lib/cli/commands/run-command";
import { withDb } from "@/lib/cli/commands/with-db";

// user create --email … --role viewer|operator|approver|admin [--tenants a,b | --all-tenants] [--name …]
// The password is read from stdin when it is piped; otherwise one is generated and printed once.
export async function userCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "create") throw new CliError("usage: user create --email <email> --role viewer|operator|approver|admin [--tenants a,b | --all-tenants] [--name <name>]");
  const { values } = parseFlags(rest, {
    email: { type: "string" },
    role: { type: "string" },
    tenants: { type: "string" },
    "all-tenants": { type: "boolean" },
    name: { type: "string" },
  });
  // Alternatives: taking both dropped the tenant list without a word (newcomer review).
  if (values.tenants !== undefined && values["all-tenants"]) throw new CliError("--tenants and --all-tenants are alternatives: give one of them");
  const role = required(values.role, "--role");
  if (!["viewer", "operator", "approver", "admin"].includes(role)) throw new CliError(`--role must be viewer, operator, approver or admin, not "${role}"`);
  const piped = process.stdin.isTTY ? null : (await readStdin()).trim();
  const password = piped || randomBytes(12).toString("base64url");
  const user = await withDb((db) =>
    createUser({
      db,
      actor: "cli",
      input: {
        email: required(values.email, "--email"),
        role: role as "viewer",
        name: values.name,
        tenants: values.tenants ? values.tenants.split(",").map((t) => t.trim()).filter(Boolean) : [],
        allTenants: values["all-tenants"] === true,
        password,
      },
    }),
  );
  process.stdout.write(`Created ${user.role} ${user.email} (${user.allTenants ? "all tenants" : user.tenants.join(", ") || "no tenant yet"}).\n`);
  if (!piped) {
    process.stdout.write("The generated password is shown once, on the next line.\n");
    process.stdout.write(`${password}\n`);
  }
  return 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
