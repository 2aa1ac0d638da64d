import { execFile } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { call } from "../support/http";
import { startTestApp, type TestApp } from "../support/test-app";
import { cloneDatabase, databaseUrl, dropDatabase } from "../support/test-database";

// The CLI is how an operator bootstraps Tollgate: tenants, keys, migrations. It runs here as a
// real process against the test database, and its keys must work against the real server.

const projectRoot = path.resolve(import.meta.dirname, "..", "..");
const tsx = path.join(projectRoot, "node_modules", ".bin", "tsx");

type CliResult = { code: number; stdout: string; stderr: string };

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.stop();
});

const cli = (...args: string[]): Promise<CliResult> => cliOn(app.url, ...args);

function cliOn(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      tsx,
      ["lib/cli/main.ts", ...args],
      { cwd: projectRoot, env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? "";

describe("tollgate CLI: tenant and API keys", () => {
  let secret = "";
  let keyId = "";

  it("tenant create acme --name Acme: creates the tenant and audits it", async () => {
    const res = await cli("tenant", "create", "acme", "--name", "Acme");

    expect(res).toMatchObject({ code: 0, stderr: "" });
    expect(res.stdout).toMatch(/Created tenant acme \(ten_[\w-]+\)/);
    const tenant = await app.db.tenant.findUniqueOrThrow({ where: { slug: "acme" } });
    expect(tenant.name).toBe("Acme");
    expect(await app.db.auditEvent.count({ where: { tenantId: tenant.id, action: "tenant.created", actor: "cli" } })).toBe(1);
  });

  it("api-key create prints the secret once, alone on the last stdout line, and stores only its hash", async () => {
    const res = await cli("api-key", "create", "--tenant", "acme", "--principal", "bot", "--role", "agent", "--tools", "a,b");

    expect(res.code).toBe(0);
    secret = lastLine(res.stdout);
    expect(secret).toMatch(/^tgk_[A-Za-z0-9_-]{40,}$/);
    expect(res.stdout.split(secret)).toHaveLength(2);
    const key = await app.db.apiKey.findFirstOrThrow({ where: { principal: "bot", tenant: { slug: "acme" } } });
    keyId = key.id;
    expect(key).toMatchObject({ role: "agent", tools: ["a", "b"], revokedAt: null, prefix: secret.slice(0, key.prefix.length) });
    expect(JSON.stringify(key)).not.toContain(secret);
  });

  it("the new key authenticates against the server: an unknown operation is 404, not 401", async () => {
    const res = await call(app.baseUrl, "GET", "/api/v1/operations/op_x", { key: secret });

    expect(res.status).toBe(404);
    expect(res.body.code).toBe("operation-not-found");
  });

  it("api-key list shows the key's id and prefix, never its secret", async () => {
    const res = await cli("api-key", "list", "--tenant", "acme");

    expect(res.code).toBe(0);
    const line = res.stdout.split("\n").find((l) => l.startsWith(keyId));
    expect(line).toBeDefined();
    expect(line).toContain(secret.slice(0, 12));
    expect(line).toMatch(/\bagent\b/);
    expect(line).toMatch(/\bactive\b/);
    expect(res.stdout).not.toContain(secret);
    expect(res.stdout).not.toContain(secret.slice(12));
  });

  it("api-key revoke <id>: the key is refused from then on (401)", async () => {
    const res = await cli("api-key", "revoke", keyId);

    expect(res.code).toBe(0);
    expect(res.stdout).toContain(keyId);
    expect((await app.db.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).not.toBeNull();
    const after = await call(app.baseUrl, "GET", "/api/v1/operations/op_x", { key: secret });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe("unauthorized");
    const listed = await cli("api-key", "list", "--tenant", "acme");
    expect(listed.stdout.split("\n").find((l) => l.startsWith(keyId))).toMatch(/revoked/);
  });

  // Newcomer review: `worker --help` was "Unknown option '--help'".
  it("<command> --help prints that command's usage and exits 0, touching nothing", async () => {
    const worker = await cli("worker", "--help");
    expect(worker.code).toBe(0);
    expect(worker.stdout).toMatch(/^Usage: npm run tollgate -- worker/);
    expect(worker.stdout).toContain("--tick-seconds");
    expect(worker.stdout).not.toContain("api-key create");
    const apiKey = await cli("api-key", "-h");
    expect(apiKey.code).toBe(0);
    expect(apiKey.stdout).toContain("api-key revoke <id>");
  });

  it("migrate on a migrated database applies nothing and says it is up to date", async () => {
    const before = await app.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM _prisma_migrations`;

    const res = await cli("migrate");

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/up to date/i);
    expect(await app.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM _prisma_migrations`).toEqual(before);
  });
});

// CLI review: every command applied pending migrations to the database it was pointed at, so a
// `prune` from cron or a `user create` from a newer checkout re-declared the hot path's SQL
// functions under the running servers.
describe("tollgate CLI on a deployment's database that lacks a migration of this checkout", () => {
  it("one-shot commands stop, name it and apply nothing; migrate applies it", async () => {
    const serverUrl = inject("serverUrl");
    const name = await cloneDatabase(serverUrl, inject("templateDb"));
    const url = databaseUrl(serverUrl, name);
    const lacking = "20261202160000_saturating_counters"; // CREATE OR REPLACE only: safe to apply again
    const applied = async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query("SELECT count(*)::int AS n FROM _prisma_migrations WHERE migration_name = $1", [lacking])).rows[0].n as number;
      } finally {
        await client.end();
      }
    };
    try {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("DELETE FROM _prisma_migrations WHERE migration_name = $1", [lacking]);
      await client.end();

      for (const args of [["prune"], ["tenant", "create", "late"]]) {
        const refused = await cliOn(url, ...args);
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toContain(`this database lacks 1 migration(s) of this checkout (${lacking})`);
        expect(refused.stderr).toContain("npm run tollgate -- migrate");
      }
      expect(await applied()).toBe(0);

      const migrated = await cliOn(url, "migrate");
      expect([migrated.code, migrated.stdout]).toEqual([0, `Applied 1 migration(s): ${lacking}\n`]);
      expect((await cliOn(url, "tenant", "create", "late")).code).toBe(0);
    } finally {
      await dropDatabase(serverUrl, name);
    }
  });
});

// Independent of each other and none may write anything, so they run side by side (each CLI
// process spends most of its time starting up).
describe("tollgate CLI: bad arguments exit non-zero with a clear message on stderr", () => {
  it.concurrent.for([
    { name: "no command", args: [], stderr: /usage/i },
    { name: "an unknown command", args: ["frobnicate"], stderr: /unknown command "frobnicate"/ },
    { name: "api-key create without --role", args: ["api-key", "create", "--tenant", "acme", "--principal", "bot2"], stderr: /--role is required/ },
    { name: "api-key create --role root", args: ["api-key", "create", "--tenant", "acme", "--principal", "bot2", "--role", "root"], stderr: /--role must be agent, approver or admin/ },
    { name: "an unknown flag", args: ["tenant", "create", "other", "--colour", "blue"], stderr: /--colour/ },
    { name: "tenant create with a bad slug", args: ["tenant", "create", "Bad Slug"], stderr: /lowercase|must be/ },
    { name: "api-key list for an unknown tenant", args: ["api-key", "list", "--tenant", "nope"], stderr: /no tenant with slug "nope"/ },
    { name: "user create with --tenants and --all-tenants", args: ["user", "create", "--email", "both@acme.test", "--role", "admin", "--tenants", "acme", "--all-tenants"], stderr: /--tenants and --all-tenants are alternatives/ },
    { name: "api-key create with a bad tool name", args: ["api-key", "create", "--tenant", "acme", "--principal", "bot2", "--role", "agent", "--tools", "Bad Tool"], stderr: /use lowercase letters, digits/ },
  ])("$name", async ({ args, stderr }, { expect }) => {
    const tenantsBefore = await app.db.tenant.count();
    const keysBefore = await app.db.apiKey.count();

    const res = await cli(...args);

    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(stderr);
    // A clear message, not a crash: no stack trace.
    expect(res.stderr).not.toMatch(/^\s+at /m);
    expect(res.stdout).not.toMatch(/tgk_/);
    expect(await app.db.tenant.count()).toBe(tenantsBefore);
    expect(await app.db.apiKey.count()).toBe(keysBefore);
    expect(await app.db.user.count({ where: { email: "both@acme.test" } })).toBe(0);
  });
});
