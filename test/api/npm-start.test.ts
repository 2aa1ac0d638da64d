import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { stopEmbeddedPostgres } from "@/lib/db/embedded-postgres";
import { databaseUrl as embeddedUrl } from "@/lib/db/embedded-postgres/settings";
import { trySignIn } from "../support/console-session";
import { call } from "../support/http";
import { freePort, TEST_SECRET } from "../support/test-app";
import { cloneDatabase, databaseUrl, dropDatabase } from "../support/test-database";

// The README's first command, run as a newcomer runs it: `npm start` (lib/cli/main.ts start)
// without DATABASE_URL starts the embedded PostgreSQL, migrates it, seeds the demo tenant and
// prints where to sign in; everything printed works. With DATABASE_URL (a deployment, whose
// stdout is a log) it seeds nothing and prints no secret unless TOLLGATE_DEMO=1.

const projectRoot = path.resolve(import.meta.dirname, "..", "..");
mkdirSync(path.join(projectRoot, ".tollgate"), { recursive: true });
// A throwaway local dir (TOLLGATE_LOCAL_DIR), never the developer's own .tollgate/.
const localDir = mkdtempSync(path.join(projectRoot, ".tollgate", "npm-start-"));
const dataDir = path.join(localDir, "postgres");
const children: ChildProcess[] = [];
const databases: string[] = [];

afterAll(async () => {
  // The whole process group: a test that failed half-way must not leave `next start` (a
  // grandchild) serving on its own.
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // the group is gone: everything stopped as it should
    }
  }
  await stopEmbeddedPostgres({ dataDir }); // only if a test failed half-way
  rmSync(localDir, { recursive: true, force: true });
  for (const name of databases) await dropDatabase(inject("serverUrl"), name);
});

type Started = { child: ChildProcess; output: () => string; exited: Promise<number | null>; baseUrl: string };

// Starts `npm start`'s command (tsx's own process, as npm runs it) and waits for its "up" line, or
// for it to exit. The build is the suite's (NEXT_DIST_DIR), so nothing is built here.
async function npmStart(env: Record<string, string | undefined>): Promise<Started> {
  const { child, output, exited, baseUrl } = await launch(env);
  const deadline = Date.now() + 90_000;
  while (!output().includes("Tollgate is up") && child.exitCode === null) {
    if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // The lines after the "up" line (credentials, or what to do next) end with one of these.
  const settled = () => /For the README's examples|Try \(|Existing data kept|no tenant yet|TOLLGATE_DEMO must be/.test(output());
  while (!settled() && child.exitCode === null) {
    if (Date.now() > deadline) throw new Error(`npm start printed nothing after coming up:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 100)); // the rest of that block, written in one go
  return { child, output, exited, baseUrl };
}

// Starts it and returns at once. PORT in `env` overrides the free port picked here.
async function launch(env: Record<string, string | undefined>): Promise<Started> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TOLLGATE_LOCAL_DIR: localDir, NEXT_DIST_DIR: inject("distDir"), PORT: String(await freePort()), ...env };
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  const child = spawn(process.execPath, ["--import", "tsx", "lib/cli/main.ts", "start"], { cwd: projectRoot, env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
  children.push(child);
  const chunks: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => chunks.join(""), exited, baseUrl: `http://127.0.0.1:${childEnv.PORT}` };
}

async function stop(started: Started): Promise<number | null> {
  started.child.kill("SIGINT");
  return started.exited;
}

function printed(output: string, pattern: RegExp): string {
  const match = pattern.exec(output);
  if (!match?.[1]) throw new Error(`not printed: ${pattern}\n${output}`);
  return match[1];
}

function postmasterPid(): number | null {
  return existsSync(path.join(dataDir, "postmaster.pid")) ? Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]) : null;
}

async function embeddedQuery<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const { port } = JSON.parse(readFileSync(`${dataDir}.state.json`, "utf8")) as { port: number };
  const client = new pg.Client({ connectionString: embeddedUrl(port) });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("npm start without DATABASE_URL: the newcomer's embedded database with the demo", () => {
  it("seeds the demo once, and every printed credential works; Ctrl-C stops the database; a second start keeps it all", async () => {
    const first = await npmStart({ DATABASE_URL: undefined, TOLLGATE_SECRET_KEY: undefined, TOLLGATE_DEMO: undefined });
    const out = first.output();
    expect(first.child.exitCode, out).toBeNull();
    // Paths as they are under TOLLGATE_LOCAL_DIR (they said .tollgate/… whatever the directory).
    const shown = path.relative(projectRoot, localDir);
    expect(out).toContain(`(data in ${shown}/postgres)`);
    expect(out).toContain(`(also saved to ${shown}/credentials, mode 0600)`);
    expect(out).toContain("Seeded the demo tenant;");
    expect(out).not.toContain("Building the app"); // it serves NEXT_DIST_DIR's build, which is current
    const email = printed(out, /console: http:\/\/localhost:\d+\/signin {2}email (\S+)/);
    const password = printed(out, /password (\S+)/);
    const adminKey = printed(out, /admin API key: (\S+)/);
    const agentKey = printed(out, /agent API key: (\S+)/);

    // The credentials file holds what was printed, readable by its owner only.
    const credentialsFile = path.join(localDir, "credentials");
    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
    const saved = readFileSync(credentialsFile, "utf8");
    for (const secret of [password, adminKey, agentKey]) expect(saved).toContain(secret);
    // The README's examples read the keys from the environment; the line that sets them is printed.
    expect(out).toContain(`export ADMIN_KEY=${adminKey} AGENT_KEY=${agentKey}`);

    // The printed sign-in works, and a wrong password does not.
    expect(await trySignIn(first.baseUrl, email, password)).toEqual({ signedIn: true, error: null });
    expect((await trySignIn(first.baseUrl, email, `${password}x`)).signedIn).toBe(false);

    // The admin key sees the three demo tools; the agent key claims one of them.
    const tools = await call(first.baseUrl, "GET", "/api/v1/tools", { key: adminKey });
    expect(tools.status, tools.text).toBe(200);
    expect((tools.body.tools as { name: string }[]).map((t) => t.name).sort()).toEqual(["deploy.production", "payments.charge", "tickets.create"]);
    // The server npm start runs has the front door (lib/http/front-door.cjs) before Next.js.
    const propfind = await call(first.baseUrl, "PROPFIND", "/api/v1/tools");
    expect(propfind.status, propfind.text).toBe(501);
    expect(propfind.body).toMatchObject({ code: "unsupported-method" });
    const claim = await call(first.baseUrl, "POST", "/api/v1/operations", {
      key: agentKey,
      headers: { "idempotency-key": "npm-start-first-claim" },
      body: { tool: "tickets.create", args: { title: "Printer on fire" } },
    });
    expect(claim.status, claim.text).toBe(201);

    // The demo data a newcomer looks at in the console: operations in several states.
    const states = await embeddedQuery<{ state: string }>("SELECT DISTINCT state FROM operation");
    expect(states.map((s) => s.state)).toEqual(expect.arrayContaining(["succeeded", "unknown", "processing"]));

    const postmaster = postmasterPid();
    expect(postmaster).not.toBeNull();
    expect(await stop(first), first.output()).toBe(130);
    expect(postmasterPid()).toBeNull();
    // An ordinary stop reads as one, not as a clean-up after a fault.
    expect(first.output()).toMatch(/embedded postgres: stopping server pid \d+ \(its last user is stopping\)/);
    expect(first.output()).not.toContain("no live process owns it");

    const second = await npmStart({ DATABASE_URL: undefined, TOLLGATE_SECRET_KEY: undefined, TOLLGATE_DEMO: undefined });
    expect(second.output()).toContain(`Existing data kept; the demo's credentials are in ${shown}/credentials (saved when it was seeded).`);
    expect(second.output()).not.toContain("Seeded");
    expect(second.output()).not.toContain(adminKey);
    const lookup = await call(second.baseUrl, "GET", "/api/v1/operations?tool=tickets.create&idempotencyKey=npm-start-first-claim", { key: agentKey });
    expect(lookup.status, lookup.text).toBe(200);
    expect(await stop(second), second.output()).toBe(130);
    expect(postmasterPid()).toBeNull();
  }, 240_000);
});

describe("npm start with DATABASE_URL: a deployment's database", () => {
  it("seeds nothing and prints no secret, only how to create the first tenant; TOLLGATE_DEMO=1 seeds the demo", async () => {
    const serverUrl = inject("serverUrl");
    const name = await cloneDatabase(serverUrl, inject("templateDb"));
    databases.push(name);
    const url = databaseUrl(serverUrl, name);
    const env = { DATABASE_URL: url, TOLLGATE_SECRET_KEY: TEST_SECRET, TOLLGATE_DEMO: undefined };

    const plain = await npmStart(env);
    expect(plain.child.exitCode, plain.output()).toBeNull();
    expect(plain.output()).toContain("The database has no tenant yet");
    expect(plain.output()).toContain("npm run tollgate -- tenant create <slug>");
    expect(plain.output()).not.toMatch(/Seeded|API key:| {2}password /);
    expect(await stop(plain), plain.output()).toBe(130);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query("SELECT count(*)::int AS n FROM tenant")).rows[0].n).toBe(0);
      expect((await client.query("SELECT count(*)::int AS n FROM app_user")).rows[0].n).toBe(0);
    } finally {
      await client.end();
    }

    const demo = await npmStart({ ...env, TOLLGATE_DEMO: "1" });
    expect(demo.output()).toContain("Seeded the demo tenant;");
    const adminKey = printed(demo.output(), /admin API key: (\S+)/);
    expect((await call(demo.baseUrl, "GET", "/api/v1/tools", { key: adminKey })).status).toBe(200);
    expect(await stop(demo), demo.output()).toBe(130);

    // Data there and the demo not asked for: nothing about credentials.
    const again = await npmStart(env);
    expect(again.output()).toMatch(/Existing data kept\.\n/);
    expect(again.output()).not.toContain("credentials");
    expect(await stop(again), again.output()).toBe(130);
  }, 240_000);

  // CLI review: "Tollgate is up" was printed for whatever answered /api/health on the port, and
  // the demo's keys, printed only once up, were lost by a start that failed after seeding.
  it("a port already taken stops it before anything starts; a start stopped right after seeding keeps the demo's keys", async () => {
    const serverUrl = inject("serverUrl");
    const name = await cloneDatabase(serverUrl, inject("templateDb"));
    databases.push(name);
    // A local dir that does not exist yet, as in a fresh clone started on DATABASE_URL.
    const freshDir = path.join(localDir, "fresh-clone");
    const env = { DATABASE_URL: databaseUrl(serverUrl, name), TOLLGATE_SECRET_KEY: TEST_SECRET, TOLLGATE_DEMO: "1", TOLLGATE_LOCAL_DIR: freshDir };
    const credentialsFile = path.join(freshDir, "credentials");

    const squatter = net.createServer((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"));
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    try {
      const port = String((squatter.address() as net.AddressInfo).port);
      const refused = await launch({ ...env, PORT: port });
      expect(await refused.exited, refused.output()).toBe(2);
      expect(refused.output()).toContain(`tollgate: port ${port} is in use`);
      expect(refused.output()).not.toMatch(/Tollgate is up:|Seeded|PostgreSQL:/);
    } finally {
      squatter.close();
    }

    const stopped = await launch(env);
    const deadline = Date.now() + 60_000;
    while (!stopped.output().includes("Seeded the demo tenant;") && stopped.child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stopped.child.kill("SIGINT");
    expect(await stopped.exited, stopped.output()).toBe(130);
    expect(stopped.output()).not.toContain("Tollgate is up:");
    const adminKey = printed(readFileSync(credentialsFile, "utf8"), /admin API key: (\S+)/);
    expect(stopped.output()).not.toContain(adminKey);

    const again = await npmStart(env);
    expect(again.output()).toContain("Existing data kept; the demo's credentials are in");
    expect((await call(again.baseUrl, "GET", "/api/v1/tools", { key: adminKey })).status).toBe(200);
    expect(await stop(again), again.output()).toBe(130);
  }, 240_000);

  it("a TOLLGATE_DEMO other than 1 or 0 stops before anything starts", async () => {
    const started = await npmStart({ DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none", TOLLGATE_SECRET_KEY: TEST_SECRET, TOLLGATE_DEMO: "yes" });
    expect(await started.exited).not.toBe(0);
    expect(started.output()).toContain('TOLLGATE_DEMO must be 1 (seed the demo tenant into an empty database) or 0 (never), not "yes"');
    expect(started.output()).not.toContain("PostgreSQL:");
  }, 60_000);
});
