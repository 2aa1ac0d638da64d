import { parseArgs } from "node:util";
import { ZodError } from "zod";
import { ProblemError } from "@/lib/http/problem";
import { localDir, shownPath } from "@/lib/cli/paths";

export class CliError extends Error {}

export const usage = `Usage: npm run tollgate -- <command>

  start                                   migrate, seed an empty database, build if needed, serve (npm start)
  dev                                     the same with next dev (npm run dev)
  migrate                                 apply pending migrations
  tenant create <slug> [--name <name>]
  api-key create --tenant <slug> --principal <name> --role agent|approver|admin [--tools a,b]
  api-key revoke <id>
  api-key list --tenant <slug>
  user create --email <email> --role viewer|operator|approver|admin [--tenants a,b | --all-tenants] [--name <name>]
                                          console user; password from stdin, or generated and printed once
  prune                                   delete terminal operations past their result retention, webhook payloads
                                          past theirs, old outbox events, ended console sessions
  worker [--concurrency N]                run the background worker (npm run worker): outbox delivery, lease reaper,
                                          probes, approval expiry, pruning; several may run at once. For tests and
                                          tuning: --tick-seconds, --abandoned-after-seconds, --recover-every-seconds,
                                          --delivery-base-ms, --delivery-cap-ms, --delivery-window-seconds,
                                          --delivery-timeout-ms, --probe-base-seconds, --probe-cap-seconds,
                                          --poll-interval-ms
  migration create <name>                 write the next migration from schema.prisma (developers)
  mcp-gateway [--tool-prefix p] [--key-source argument|meta] [--call-timeout s] (-- <command> [args] | --upstream-url <url>)
                                          an MCP server (stdio) in front of an upstream MCP server (the one <command>
                                          starts, or a remote one over Streamable HTTP: TOLLGATE_UPSTREAM_AUTHORIZATION):
                                          every tool that is not read-only is claimed and completed in Tollgate
                                          (TOLLGATE_URL, TOLLGATE_API_KEY: an agent key; needs no database)

Without DATABASE_URL every command uses the embedded PostgreSQL under ${shownPath(localDir)}/.`;

type Handler = (args: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Handler>> = {
  start: async () => (await import("@/lib/cli/commands/start")).start,
  dev: async () => (await import("@/lib/cli/commands/start")).dev,
  migrate: async () => (await import("@/lib/cli/commands/migrate")).migrateCommand,
  tenant: async () => (await import("@/lib/cli/commands/tenant")).tenantCommand,
  "api-key": async () => (await import("@/lib/cli/commands/api-key")).apiKeyCommand,
  user: async () => (await import("@/lib/cli/commands/user")).userCommand,
  prune: async () => (await import("@/lib/cli/commands/prune")).pruneCommand,
  worker: async () => (await import("@/lib/cli/commands/worker")).workerCommand,
  migration: async () => (await import("@/lib/cli/commands/migration")).migrationCommand,
  "mcp-gateway": async () => (await import("@/lib/cli/commands/mcp-gateway")).mcpGatewayCommand,
};

export async function runCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) throw new CliError(`a command is required\n\n${usage}`);
  if (name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const load = commands[name];
  if (!load) throw new CliError(`unknown command "${name}"\n\n${usage}`);
  // `<command> --help` (before a "--", after which the arguments are an upstream's, as for mcp-gateway).
  const own = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (own.includes("--help") || own.includes("-h")) {
    process.stdout.write(`${commandUsage(name)}\n`);
    return 0;
  }
  try {
    return await (await load())(rest);
  } catch (error) {
    if (error instanceof ZodError) throw new CliError(error.issues.map((i) => `${i.path.join(".") || "value"}: ${i.message}`).join("; "));
    if (error instanceof ProblemError) throw new CliError(error.message);
    if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS")) throw new CliError(error.message);
    throw error;
  }
}

// The usage lines of one command (and their continuation lines), for `<command> --help`.
export function commandUsage(name: string): string {
  const lines = usage.split("\n");
  const out: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (/^  \S/.test(line)) inside = line.slice(2).split(" ")[0] === name;
    else if (!/^ {3,}\S/.test(line)) inside = false;
    if (inside) out.push(line);
  }
  return `Usage: npm run tollgate -- ${name} …\n\n${out.join("\n")}`;
}

// parseArgs with strict checking; unknown flags and stray positionals become CliErrors.
export function parseFlags<T extends Record<string, { type: "string" | "boolean" }>>(args: string[], options: T, positionals = 0) {
  const parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals > 0 });
  if (parsed.positionals.length > positionals) throw new CliError(`unexpected argument "${parsed.positionals[positionals] ?? ""}"`);
  return parsed;
}

export function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== "string" || value === "") throw new CliError(`${flag} is required`);
  return value;
}
