import { z } from "zod";
import { parseCidr } from "@/lib/http/cidr";

// Every environment variable Tollgate reads, parsed once. Nothing else reads process.env
// (tests pass settings as options instead). Parsed lazily so `next build` needs none of them.
const envSchema = z.object({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (npm start sets it for the embedded database)"),
  // Server secret: derives downstream keys (HMAC) and, later, encrypts webhook secrets.
  TOLLGATE_SECRET_KEY: z.string().min(32, "TOLLGATE_SECRET_KEY must be at least 32 characters"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // Seconds an instance trusts a cached API-key lookup; the hot-path SQL re-checks revocation anyway.
  TOLLGATE_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
  // Connections the hot path's statements pipeline on (lib/db/hot-sql.ts): one pipelines best.
  DATABASE_HOT_CONNECTIONS: z.coerce.number().int().min(1).max(32).default(1),
  // Console sign-in. The JWT secret defaults to one derived from TOLLGATE_SECRET_KEY.
  NEXTAUTH_SECRET: z.string().min(32).optional(),
  TOLLGATE_SESSION_HOURS: z.coerce.number().min(0.1).max(24 * 30).default(8),
  // Optional single sign-on: all three turn on an OpenID Connect provider.
  OIDC_ISSUER: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_NAME: z.string().default("Single sign-on"),
  // "false" for an identity provider that never sends `email_verified` but only issues addresses
  // it owns (some Microsoft Entra ID setups): then its email is trusted as it is.
  OIDC_REQUIRE_EMAIL_VERIFIED: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
});

// CIDRs the worker's outbound calls (event deliveries, probes) may reach although they are
// private, loopback or reserved, comma-separated: "10.20.0.0/16,127.0.0.1". Empty: public
// addresses only. Only the worker reads it (not in envSchema: a typo here must not stop the API).
const egressAllowSchema = z
  .string()
  .default("")
  .transform((raw, ctx) => {
    const entries = raw.split(",").map((e) => e.trim()).filter(Boolean);
    for (const entry of entries) {
      try {
        parseCidr(entry);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
      }
    }
    return entries;
  });

export type Env = z.infer<typeof envSchema>;

function invalidEnvironment(issues: z.core.$ZodIssue[]): Error {
  return new Error(`Invalid environment:\n${issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n")}`);
}

let cached: Env | undefined;

export function env(): Env {
  if (!cached) {
    const parsed = envSchema.safeParse(process.env);
    if (!parsed.success) throw invalidEnvironment(parsed.error.issues);
    cached = parsed.data;
  }
  return cached;
}

// Read alone: `npm start` runs the worker in its own process, whose environment need not hold
// the web server's variables (DATABASE_URL, the secret).
export function egressAllow(): string[] {
  const parsed = egressAllowSchema.safeParse(process.env.TOLLGATE_EGRESS_ALLOW);
  if (!parsed.success) throw new Error(`Invalid environment: TOLLGATE_EGRESS_ALLOW: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}

// The logger starts before the rest of the environment is known (CLI, build), so its level is read alone.
export function logLevel(): string {
  return envSchema.shape.LOG_LEVEL.parse(process.env.LOG_LEVEL);
}

// The MCP gateway is a client of the API and needs none of the server's variables. Its agent key
// comes from the environment, never the command line (where `ps` would show it to every user).
// Both are sent as header values, and fetch refuses a value with a control character inside by
// quoting it whole in its error ("Headers.append: "Bearer tgk_…" is an invalid header value"),
// which the gateway logged: refused here instead, by a message that never repeats the value.
const mcpGatewayEnvSchema = z.object({
  TOLLGATE_API_KEY: z
    .string()
    .min(1, "TOLLGATE_API_KEY (an agent key of the tenant) is required")
    .regex(/^[\x21-\x7e]+$/, "TOLLGATE_API_KEY holds a space or a character that is not printable ASCII: copy the key again"),
  // fetch refuses a URL with credentials in it by quoting the URL, password and all, in its error:
  // the gateway logged that on every call. As for --upstream-url, they are refused at start.
  TOLLGATE_URL: z
    .url()
    .refine((u) => !URL.canParse(u) || (new URL(u).username === "" && new URL(u).password === ""), "TOLLGATE_URL must not hold a user name or password")
    .default("http://localhost:3000"),
  // Sent as the Authorization header to an upstream reached with --upstream-url.
  TOLLGATE_UPSTREAM_AUTHORIZATION: z
    .string()
    .regex(/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/, "TOLLGATE_UPSTREAM_AUTHORIZATION must be printable ASCII (spaces only inside)")
    .optional(),
});

export function mcpGatewayEnv(): z.infer<typeof mcpGatewayEnvSchema> {
  const parsed = mcpGatewayEnvSchema.safeParse(process.env);
  if (!parsed.success) throw invalidEnvironment(parsed.error.issues);
  return parsed.data;
}

// The environment an upstream MCP server gets from the gateway: the gateway's own, without
// Tollgate's variables (its API key above all: the upstream tool has no business holding it).
export function upstreamEnvironment(): Record<string, string> {
  const entries = Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith("TOLLGATE_"));
  return Object.fromEntries(entries);
}
