// The console's query benchmark (issue 4, "Performance"): `npm run bench -- console [options]`
// or `npx tsx bench/console-bench.ts [options]`.
//
// 1. A scratch database on the system PostgreSQL, migrated as `npm start` migrates, with a tenant
//    of 1,000,000 operations (and their attempts) over 30 days, seeded by INSERT … SELECT FROM
//    generate_series in two parallel chunks, secondary indexes dropped during the load and
//    re-created from their own definitions afterwards, then VACUUM ANALYZE.
// 2. Server-side: the lib functions the pages call (listOperations, exportOperationsCsv) and the
//    reconcile-queue SQL, each 30+ times after a warm-up, through a Prisma client: p50/p95 against
//    the 50 ms target, and EXPLAIN (ANALYZE, BUFFERS) of the exact SQL: top plan node and indexes.
// 3. Page TTFB: a real `next start` on that database, signed in through next-auth's credentials
//    flow; GET /t/bench/operations (first, deep, filtered) and the trace page.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import v8 from "node:v8";
import vm from "node:vm";
import pg from "pg";
import { createDb, type Db } from "@/lib/db";
import { migrate } from "@/lib/db/migrate";
import { ensureBuild, inputsDigest } from "@/lib/cli/ensure-build";
import { Prisma } from "@/lib/generated/prisma/client";
import { createTenant } from "@/lib/tenants/create-tenant";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { putTool } from "@/lib/tools/put-tool";
import { toolDefinitionSchema } from "@/lib/tools/tool-schema";
import { createUser } from "@/lib/users/create-user";
import { buildOperationsQuery, listOperations, operationsCursor } from "@/lib/console/list-operations";
import { exportOperationsCsv } from "@/lib/console/export-operations-csv";
import { loadOperationsQuery, serializeOperationsQuery, type OperationsQuery } from "@/lib/console/operations-query";
import { countReconcileQueue } from "@/lib/console/reconcile-queue";
import { connectionFamiliesSql, listInbox } from "@/lib/console/webhook-inbox";
import { startServer, type BenchServer } from "./server";

const TARGET_MS = 50;
const DB_NAME = "tollgate_console_bench";
const TOOLS = ["payments.charge", "payments.refund", "tickets.create", "email.send", "deploy.production", "crm.update", "storage.put", "sms.send"];
const PRINCIPALS = ["agent-billing", "agent-support", "agent-ops", "agent-sales", "agent-etl", "agent-deploy", "agent-crm", "agent-notify"].concat(
  Array.from({ length: 12 }, (_, i) => `agent-${String(i + 9).padStart(2, "0")}`),
);
const DAYS = 30;

type Options = { rows: number; runs: number; warmup: number; reuse: boolean; keepDb: boolean; pages: boolean; serverUrl: string };

const USAGE = `usage: npm run bench -- console [--rows 1m] [--runs 30] [--reuse] [--keep-db] [--no-pages]
  --rows N     operations in the measured tenant (default 1m; 100k for a quick look)
  --runs N     measured runs per query after 3 warm-up runs (default 30)
  --reuse      keep and reuse the database ${DB_NAME} when it already holds N rows (skips seeding)
  --keep-db    do not drop the database at the end
  --no-pages   skip the next start / page TTFB part
DATABASE_URL picks the PostgreSQL server (default postgresql://postgres@127.0.0.1:5432/postgres).`;

export async function runConsoleBench(argv: string[]): Promise<number> {
  let options: Options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return argv.includes("--help") || argv.includes("-h") ? 0 : 2;
  }
  // The export logs a line per run; the bench prints its own report.
  process.env.LOG_LEVEL ??= "warn";
  const log = (msg: string) => process.stderr.write(`[console-bench] ${msg}\n`);
  const out = (s = "") => process.stdout.write(`${s}\n`);
  const started = performance.now();
  const loadBefore = loadavg();
  const databaseUrl = withDatabase(options.serverUrl, DB_NAME);
  const world = await prepareDatabase(options, databaseUrl, log);
  const db = createDb(databaseUrl, 10);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  let server: BenchServer | null = null;
  try {
    const machine = await pool.query<{ version: string; sb: string }>("SELECT current_setting('server_version') AS version, current_setting('shared_buffers') AS sb");
    log("measuring the list queries");
    const cases = await buildCases(db, world.tenantId, world.rows);
    const results: CaseResult[] = [];
    for (const c of cases) results.push(await measureCase(db, world.tenantId, c, options));
    const queue = await measureReconcile(db, world.tenantId, options);
    const exportRun = await measureExport(db, world.tenantId);

    let pages: PageResult[] = [];
    let httpExport: HttpExportResult | null = null;
    if (options.pages) {
      log("building and starting next start for page TTFB");
      const distDir = path.join(".tollgate", "next-console-bench", inputsDigest().slice(0, 16));
      if (ensureBuild({ distDir, log }).built) pruneOldBuilds(path.dirname(distDir), distDir);
      server = await startServer({ databaseUrl, distDir, secret: randomBytes(32).toString("hex") });
      pages = await measurePages(server.baseUrl, world, cases, options);
      httpExport = await measureHttpExport(server, world);
    }

    const loadAfter = loadavg();
    out();
    out(`## Tollgate console benchmark — ${new Date().toISOString()} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    out(
      `PostgreSQL ${machine.rows[0]?.version} (shared_buffers ${machine.rows[0]?.sb}), Node ${process.version}; tenant "bench" holds ${fmt(world.rows)} operations ` +
        `(+ ${fmt(world.otherRows)} in another tenant), ${world.seeded ? `seeded in ${world.seedSeconds.toFixed(1)} s` : "reused"}; ` +
        `${options.runs} runs per query after ${options.warmup} warm-up runs; load average before ${loadBefore.map((l) => l.toFixed(2)).join(" ")}, after ${loadAfter.map((l) => l.toFixed(2)).join(" ")}`,
    );
    out();
    out("### Operations list — listOperations() (the page's query + its count, in parallel), server-side");
    out("| query | sort | page | rows | total shown | p50 ms | p95 ms | p95 < 50 ms | plan (page query) | count query |");
    out("|---|---|---|---:|---|---:|---:|:---:|---|---|");
    for (const r of results) {
      out(`| ${r.name} | ${r.sort} | ${r.page} | ${r.rows} | ${r.total} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.p95 < TARGET_MS ? "PASS" : "FAIL"} | ${r.plan} | ${r.countPlan} |`);
    }
    out();
    out("### Reconcile queue (SQL as the brief writes it), the shell's queue count, and the inbox");
    out("| query | p50 ms | p95 ms | p95 < 50 ms | plan |");
    out("|---|---:|---:|:---:|---|");
    for (const r of queue) out(`| ${r.name} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.p95 < TARGET_MS ? "PASS" : "FAIL"} | ${r.plan} |`);
    out();
    out(
      `### CSV export — exportOperationsCsv(), ${exportRun.filter}: ${fmt(exportRun.rows)} rows, ${(exportRun.bytes / 1e6).toFixed(1)} MB in ${exportRun.seconds.toFixed(2)} s ` +
        `(${fmt(Math.round(exportRun.rows / exportRun.seconds))} rows/s, keyset batches of 1,000); live heap grew by at most ${exportRun.heapGrowthMb.toFixed(1)} MB while streaming (whole file: ${(exportRun.bytes / 1e6).toFixed(1)} MB)`,
    );
    if (pages.length) {
      out();
      out("### Pages — next start on this database, signed in (TTFB = response headers; full = whole HTML streamed)");
      out("| page | TTFB p50 ms | TTFB p95 ms | full p50 ms | full p95 ms | bytes |");
      out("|---|---:|---:|---:|---:|---:|");
      for (const p of pages) out(`| ${p.name} | ${p.ttfb50.toFixed(1)} | ${p.ttfb95.toFixed(1)} | ${p.full50.toFixed(1)} | ${p.full95.toFixed(1)} | ${fmt(p.bytes)} |`);
    }
    if (httpExport) {
      out();
      out(
        `CSV over HTTP (GET /api/console/bench/operations/export?${httpExport.filter}): ${httpExport.status}, ${httpExport.disposition}; ` +
          `${fmt(httpExport.rows)} rows, ${(httpExport.bytes / 1e6).toFixed(1)} MB; first byte after ${httpExport.ttfbMs.toFixed(0)} ms, done in ${(httpExport.totalMs / 1000).toFixed(2)} s; ` +
          `server RSS ${httpExport.rssBeforeMb.toFixed(0)} MB before, at most ${httpExport.rssMaxMb.toFixed(0)} MB during`,
      );
    }
    const failed = results.filter((r) => r.p95 >= TARGET_MS).length + queue.filter((r) => r.p95 >= TARGET_MS).length;
    out();
    out(failed ? `${failed} queries FAIL the p95 < ${TARGET_MS} ms target.` : `Every query meets p95 < ${TARGET_MS} ms.`);
    const dir = path.resolve("bench", ".results");
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `console-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(file, `${JSON.stringify({ options, world: { ...world, password: undefined }, results, queue, exportRun, pages, httpExport, loadBefore, loadAfter }, null, 2)}\n`);
    out(`results: ${path.relative(process.cwd(), file)}`);
    out(`reproduce: npm run bench -- console --rows ${options.rows} --runs ${options.runs}${options.reuse ? " --reuse" : ""}`);
    return failed ? 1 : 0;
  } finally {
    await server?.stop();
    await db.$disconnect();
    await pool.end();
    if (!options.keepDb && !options.reuse) await dropDatabase(options.serverUrl, DB_NAME);
  }
}

// ---------------------------------------------------------------------------------------------
// Arguments

function parseArgs(argv: string[]): Options {
  const options: Options = {
    rows: 1_000_000,
    runs: 30,
    warmup: 3,
    reuse: false,
    keepDb: false,
    pages: true,
    serverUrl: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => inline ?? argv[++i] ?? "";
    if (flag === "console") continue;
    else if (flag === "--rows") options.rows = parseCount(value());
    else if (flag === "--runs") options.runs = Math.max(5, parseCount(value()));
    else if (flag === "--reuse") options.reuse = true;
    else if (flag === "--keep-db") options.keepDb = true;
    else if (flag === "--no-pages") options.pages = false;
    else throw new Error(`${flag === "-h" || flag === "--help" ? "" : `unknown argument: ${arg}\n`}${USAGE}`);
  }
  return options;
}

function parseCount(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!m) throw new Error(`not a number: ${text}\n${USAGE}`);
  const unit = (m[2] ?? "").toLowerCase();
  return Math.round(Number(m[1]) * (unit === "m" ? 1e6 : unit === "k" ? 1e3 : 1));
}

// ---------------------------------------------------------------------------------------------
// Database and seed

type World = { tenantId: string; rows: number; otherRows: number; seeded: boolean; seedSeconds: number; email: string; password: string };

function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

// The bench's console user, kept in the database so --reuse can sign in again.
const BENCH_EMAIL = "bench-admin@console-bench.local";

async function prepareDatabase(options: Options, databaseUrl: string, log: (msg: string) => void): Promise<World> {
  if (options.reuse) {
    const existing = await readWorld(databaseUrl).catch(() => null);
    if (existing && existing.rows === options.rows) {
      log(`reusing ${DB_NAME} (${fmt(existing.rows)} operations)`);
      return existing;
    }
  }
  await dropDatabase(options.serverUrl, DB_NAME);
  await adminQuery(options.serverUrl, `CREATE DATABASE "${DB_NAME}"`);
  log(`created ${DB_NAME}; migrating`);
  await migrate({ databaseUrl, migrationsDir: path.resolve("prisma", "migrations") });
  const db = createDb(databaseUrl, 2);
  const password = randomBytes(12).toString("base64url");
  let tenantId: string;
  let otherId: string;
  try {
    const tenant = await createTenant({ db, slug: "bench", name: "Console benchmark", actor: "bench" });
    const other = await createTenant({ db, slug: "other", name: "Another tenant", actor: "bench" });
    tenantId = tenant.id;
    otherId = other.id;
    for (const name of TOOLS) {
      for (const t of [tenant, other]) {
        await putTool({ db, tenantId: t.id, name, definition: toolDefinitionSchema.parse({ description: `bench ${name}`, policy: { leaseSeconds: 60, maxAttempts: 3 } }), actor: "bench" });
      }
    }
    for (const principal of PRINCIPALS) await createApiKey({ db, tenantId, input: { principal, role: "agent" }, actor: "bench" });
    await createUser({ db, actor: "bench", input: { email: BENCH_EMAIL, name: "Bench admin", role: "admin", tenants: ["bench"], password } });
    await db.$executeRaw`CREATE TABLE console_bench_meta (password text NOT NULL)`;
    await db.$executeRaw`INSERT INTO console_bench_meta VALUES (${password})`;
  } finally {
    await db.$disconnect();
  }
  const otherRows = Math.max(1000, Math.round(options.rows / 50));
  const seedSeconds = await seedOperations(databaseUrl, [
    { tenantId, tag: "b", rows: options.rows },
    { tenantId: otherId, tag: "o", rows: otherRows },
  ], log);
  await seedWebhookEvents(databaseUrl, tenantId, log);
  return { tenantId, rows: options.rows, otherRows, seeded: true, seedSeconds, email: BENCH_EMAIL, password };
}

// The inbox's history: a provider connection whose events matched 60% of the tenant's operations
// (the inbox reads what a connection matched to rank candidates), and 2,000 recent events that
// named nothing, waiting in the inbox.
async function seedWebhookEvents(databaseUrl: string, tenantId: string, log: (msg: string) => void): Promise<void> {
  const t0 = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO webhook_connection (id, tenant_id, name, scheme, secrets_encrypted, correlation_path, outcomes)
       VALUES ('whc_console_bench', $1, 'billing', 'standard_webhooks', '{}', 'data.metadata.tollgate_operation', '{"charge.succeeded":"succeeded"}')`,
      [tenantId],
    );
    const matched = await client.query(
      `INSERT INTO webhook_event (id, tenant_id, connection_id, provider_event_id, event_type, payload, correlation_value, status, outcome, operation_id, received_at)
       SELECT 'whe_m' || o.id, o.tenant_id, 'whc_console_bench', 'evt_m' || o.id, 'charge.succeeded', '{}'::jsonb, o.id, 'matched', 'succeeded', o.id,
         o.created_at + interval '2 seconds'
       FROM operation o WHERE o.tenant_id = $1 AND abs(hashtext(o.id)) % 10 < 6`,
      [tenantId],
    );
    await client.query(
      `INSERT INTO webhook_event (id, tenant_id, connection_id, provider_event_id, event_type, payload, correlation_value, status, received_at)
       SELECT 'whe_u' || i, $1, 'whc_console_bench', 'evt_u' || i, 'charge.succeeded',
         jsonb_build_object('type', 'charge.succeeded', 'data', jsonb_build_object('id', 'ch_' || i)), 'lost-' || i, 'unmatched', now() - i * interval '1 minute'
       FROM generate_series(1, 2000) AS i`,
      [tenantId],
    );
    await client.query("ANALYZE webhook_event");
    log(`seeded ${fmt(matched.rowCount ?? 0)} matched and 2,000 unmatched webhook events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
}

async function readWorld(databaseUrl: string): Promise<World> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; slug: string; n: string; password: string }>(
      `SELECT t.id, t.slug, (SELECT count(*) FROM operation o WHERE o.tenant_id = t.id) AS n, (SELECT password FROM console_bench_meta) AS password
       FROM tenant t WHERE t.slug IN ('bench', 'other')`,
    );
    const bench = rows.find((r) => r.slug === "bench");
    const other = rows.find((r) => r.slug === "other");
    if (!bench || !other) throw new Error("not a console bench database");
    return { tenantId: bench.id, rows: Number(bench.n), otherRows: Number(other.n), seeded: false, seedSeconds: 0, email: BENCH_EMAIL, password: bench.password };
  } finally {
    await client.end();
  }
}

// Rows older than two hours are history: mostly succeeded, some failed/rejected, a thin backlog
// of unknown outcomes (0.3 %) and of processing rows whose worker died (0.1 %, lease long
// expired). The last two hours are live: processing with a lease, pending retries, approvals.
// About 1 % of rows saw conflicts (a fifth of those with different arguments: 422), 12.5 %
// replays. Ids, key digests and downstream keys are unique; key digests are SHA-256 of
// "<tag>-key-<n>", so the raw-key search can be measured too.
const SEED_SQL = `
WITH g AS (
  SELECT g, $1::text AS tenant_id, $2::text AS tag, $6::bigint AS token_base,
    now() - ($3::int - g) * make_interval(secs => ${DAYS} * 86400.0 / $3::int) AS created,
    ((g::bigint * 7919) % 1000)::int AS b
  FROM generate_series($4::int, $5::int) AS g
), s AS (
  SELECT g.*, created > now() - interval '2 hours' AS recent,
    (CASE WHEN created > now() - interval '2 hours' THEN
       CASE WHEN b < 600 THEN 'succeeded' WHEN b < 700 THEN 'failed' WHEN b < 800 THEN 'processing' WHEN b < 880 THEN 'pending'
            WHEN b < 940 THEN 'awaiting_approval' WHEN b < 970 THEN 'unknown' ELSE 'rejected' END
     ELSE
       CASE WHEN b < 880 THEN 'succeeded' WHEN b < 950 THEN 'failed' WHEN b < 970 THEN 'rejected' WHEN b < 996 THEN 'succeeded'
            WHEN b < 999 THEN 'unknown' ELSE 'processing' END
     END)::operation_state AS state,
    'op_' || tag || lpad(to_hex((g::bigint * 2654435761) % 4294967296), 8, '0') || to_hex(g) AS op_id
  FROM g
), ops AS (
  INSERT INTO operation (id, tenant_id, principal, tool, key_digest, fingerprint, args, state, max_attempts, attempt_count,
    fencing_token, lease_expires_at, not_before, downstream_key, workflow_id, trace_id, result, error, completed_at, result_expires_at,
    conflict_count, mismatch_count, replay_count, last_conflict_at, last_replay_at, created_at, updated_at)
  SELECT op_id, tenant_id, ($7::text[])[1 + (g * 7) % cardinality($7::text[])], ($8::text[])[1 + (g / 3) % cardinality($8::text[])],
    encode(sha256((tag || '-key-' || g)::bytea), 'hex'),
    'v1:bench' || (g % 5000),
    '{"amount": 1200, "currency": "eur", "customer": "cus_bench"}'::jsonb,
    state, 3,
    CASE WHEN state IN ('awaiting_approval', 'rejected') THEN 0 ELSE 1 + (g % 10 = 0)::int + (g % 50 = 0)::int END,
    CASE WHEN state IN ('awaiting_approval', 'rejected') THEN NULL ELSE token_base + g END,
    CASE WHEN state = 'processing' THEN (CASE WHEN recent THEN now() + interval '5 minutes' ELSE created + interval '60 seconds' END) END,
    CASE WHEN state = 'pending' THEN now() + interval '30 seconds' END,
    'dk_' || tag || lpad(to_hex((g::bigint * 40503) % 4294967296), 8, '0') || to_hex(g),
    CASE WHEN g % 3 <> 0 THEN 'wf_' || tag || (g / 7) END,
    CASE WHEN g % 2 = 0 THEN 'tr_' || tag || g END,
    CASE WHEN state = 'succeeded' THEN jsonb_build_object('statusCode', 201, 'resourceId', 'res_' || tag || g) END,
    CASE WHEN state IN ('failed', 'pending', 'unknown') THEN '{"code": "provider-timeout", "message": "upstream timed out"}'::jsonb END,
    CASE WHEN state IN ('succeeded', 'failed', 'rejected') THEN created + interval '2 seconds' END,
    CASE WHEN state IN ('succeeded', 'failed', 'rejected') THEN created + interval '24 hours' END,
    CASE WHEN g % 97 = 3 THEN 1 + g % 4 ELSE 0 END,
    CASE WHEN g % 485 = 3 THEN 1 ELSE 0 END,
    CASE WHEN g % 8 = 0 THEN 1 + g % 3 ELSE 0 END,
    CASE WHEN g % 97 = 3 THEN created + interval '5 seconds' END,
    CASE WHEN g % 8 = 0 THEN created + interval '9 seconds' END,
    created, created + make_interval(secs => 2 + g % 600)
  FROM s
  RETURNING id, tenant_id, principal, state, attempt_count, fencing_token, lease_expires_at, created_at
)
INSERT INTO attempt (id, tenant_id, operation_id, number, fencing_token, principal, started_at, ended_at, lease_expires_at, outcome)
SELECT 'att_' || substr(id, 4), tenant_id, id, 1, fencing_token, principal, created_at,
  CASE WHEN state <> 'processing' THEN created_at + interval '2 seconds' END,
  coalesce(lease_expires_at, created_at + interval '60 seconds'),
  (CASE state WHEN 'succeeded' THEN 'succeeded' WHEN 'failed' THEN 'failed' WHEN 'pending' THEN 'retryable_failure'
    WHEN 'unknown' THEN 'unknown' END)::attempt_outcome
FROM ops WHERE fencing_token IS NOT NULL`;

async function seedOperations(databaseUrl: string, tenants: { tenantId: string; tag: string; rows: number }[], log: (msg: string) => void): Promise<number> {
  const started = performance.now();
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const { rows: indexes } = await pool.query<{ name: string; def: string; size: string }>(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def, c.relname AS size
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
       WHERE i.indrelid IN ('operation'::regclass, 'attempt'::regclass) AND NOT i.indisprimary`,
    );
    for (const index of indexes) await pool.query(`DROP INDEX ${index.name}`);
    const total = tenants.reduce((sum, t) => sum + t.rows, 0);
    const { rows: seq } = await pool.query<{ base: string }>("SELECT setval('fencing_token_seq', nextval('fencing_token_seq') + $1::bigint) - $1::bigint AS base", [total * 2]);
    let tokenBase = BigInt(seq[0]?.base ?? "0");
    // Two chunks per tenant, inserted side by side: the INSERT … SELECT is CPU-bound and single-threaded.
    const chunks: unknown[][] = [];
    for (const t of tenants) {
      const half = Math.floor(t.rows / 2);
      for (const [from, to] of [[1, half], [half + 1, t.rows]] as const) {
        if (to >= from) chunks.push([t.tenantId, t.tag, t.rows, from, to, tokenBase.toString(), PRINCIPALS, TOOLS]);
      }
      tokenBase += BigInt(t.rows);
    }
    log(`seeding ${fmt(total)} operations and their attempts (${indexes.length} secondary indexes dropped meanwhile)`);
    await inParallel(chunks, 2, async (params) => {
      const client = await pool.connect();
      try {
        await client.query("SET synchronous_commit = off");
        await client.query(SEED_SQL, params);
      } finally {
        client.release();
      }
    });
    log(`inserted in ${((performance.now() - started) / 1000).toFixed(1)} s; re-creating ${indexes.length} indexes`);
    await inParallel(indexes, 2, async (index) => {
      const client = await pool.connect();
      try {
        await client.query("SET maintenance_work_mem = '256MB'");
        await client.query(index.def);
      } finally {
        client.release();
      }
    });
    await pool.query("VACUUM (ANALYZE) operation");
    await pool.query("VACUUM (ANALYZE) attempt");
  } finally {
    await pool.end();
  }
  const seconds = (performance.now() - started) / 1000;
  log(`seeded in ${seconds.toFixed(1)} s`);
  return seconds;
}

async function inParallel<T>(items: T[], width: number, run: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await run(item);
  }));
}

// ---------------------------------------------------------------------------------------------
// The list cases

type Case = { name: string; query: OperationsQuery; page: string; sortLabel: string };
type CaseResult = { name: string; sort: string; page: string; rows: number; total: string; p50: number; p95: number; plan: string; countPlan: string; url: string };

// Each filter alone, with its sort, on a DEEP page: the cursor of the row 80 % of the way
// through that filter's result (found once with OFFSET, which the page itself never uses).
async function buildCases(db: Db, tenantId: string, rows: number): Promise<Case[]> {
  const sample = await db.$queryRaw<{ id: string; resource_id: string; downstream_key: string; key_digest: string; workflow_id: string; g: string }[]>`
    SELECT id, result ->> 'resourceId' AS resource_id, downstream_key, key_digest, workflow_id, substr(result ->> 'resourceId', 6) AS g
    FROM operation WHERE tenant_id = ${tenantId} AND state = 'succeeded' AND workflow_id IS NOT NULL ORDER BY created_at DESC OFFSET ${Math.floor(rows * 0.3)} LIMIT 1`;
  const s = sample[0];
  if (!s) throw new Error("the bench tenant has too few succeeded operations");
  const tenDaysAgo = new Date(Date.now() - 20 * 86_400_000).toISOString();
  const tenDaysLater = new Date(Date.now() - 10 * 86_400_000).toISOString();
  const q = (text: string) => loadOperationsQuery(text);
  const deep = async (name: string, text: string, sortLabel: string): Promise<Case> => {
    const query = q(text);
    const cursor = await deepCursor(db, tenantId, query);
    return { name, query: { ...query, after: cursor.cursor, page: cursor.page }, page: `deep (row ${fmt(cursor.offset)} of ${fmt(cursor.total)})`, sortLabel };
  };
  return [
    { name: "no filter", query: q(""), page: "1", sortLabel: "created ↓" },
    await deep("no filter", "", "created ↓"),
    await deep("no filter", "sort=updated", "updated ↓"),
    await deep("no filter", "dir=asc", "created ↑"),
    await deep("state = unknown", "state=unknown", "created ↓"),
    await deep("state = failed", "state=failed&sort=updated", "updated ↓"),
    await deep("state ∈ {failed, unknown, rejected}", "state=failed,unknown,rejected", "created ↓"),
    await deep("tool = payments.refund", "tool=payments.refund", "created ↓"),
    await deep("principal = agent-ops", "principal=agent-ops", "created ↓"),
    await deep("created in a 10-day window", `from=${tenDaysAgo}&to=${tenDaysLater}&dir=asc`, "created ↑"),
    await deep("has conflicts", "conflicts=true", "created ↓"),
    { name: "search: operation id", query: q(`q=${s.id}`), page: "1", sortLabel: "created ↓" },
    { name: "search: resource id", query: q(`q=${s.resource_id}`), page: "1", sortLabel: "created ↓" },
    { name: "search: downstream key", query: q(`q=${s.downstream_key}`), page: "1", sortLabel: "created ↓" },
    { name: "search: workflow id", query: q(`q=${s.workflow_id}`), page: "1", sortLabel: "created ↓" },
    { name: "search: key digest (64 hex)", query: q(`q=${s.key_digest}`), page: "1", sortLabel: "created ↓" },
    { name: "search: key digest prefix (10 hex)", query: q(`q=${s.key_digest.slice(0, 10)}`), page: "1", sortLabel: "created ↓" },
  ];
}

async function deepCursor(db: Db, tenantId: string, query: OperationsQuery): Promise<{ cursor: string; offset: number; total: number; page: number }> {
  // The page query's own filter, counted and then offset: setup only.
  const where = buildOperationsQuery({ tenantId, query: { ...query, after: null, before: null }, limit: 1 }).filter;
  const column = query.sort === "updated" ? Prisma.raw("updated_at") : Prisma.raw("created_at");
  const dir = query.dir === "desc" ? Prisma.raw("DESC") : Prisma.raw("ASC");
  const [{ n } = { n: 0 }] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM operation WHERE ${where}`;
  const offset = Math.floor(n * 0.8);
  const rows = await db.$queryRaw<{ id: string; created_at: Date; updated_at: Date }[]>`
    SELECT id, created_at, updated_at FROM operation WHERE ${where} ORDER BY ${column} ${dir}, id ${dir} OFFSET ${offset} LIMIT 1`;
  const row = rows[0];
  if (!row) throw new Error(`no deep row for ${serializeOperationsQuery(query)}`);
  return { cursor: operationsCursor(query, { id: row.id, createdAt: row.created_at, updatedAt: row.updated_at }), offset, total: n, page: Math.floor(offset / query.size) + 2 };
}

async function measureCase(db: Db, tenantId: string, c: Case, options: Options): Promise<CaseResult> {
  const run = () => listOperations({ db, tenantId, query: c.query });
  let last = await run();
  for (let i = 1; i < options.warmup; i++) last = await run();
  const times: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    const t0 = performance.now();
    last = await run();
    times.push(performance.now() - t0);
  }
  const built = buildOperationsQuery({ tenantId, query: c.query, limit: c.query.size });
  const plan = await explain(db, built.page);
  const countPlan = built.countable ? await explain(db, built.count) : { summary: "planner estimate (EXPLAIN, no scan)" };
  const total = last.total ? (last.total.kind === "exact" ? fmt(last.total.n) : last.total.kind === "at-least" ? `${fmt(last.total.n)}+` : `≈ ${fmt(last.total.n)}`) : "–";
  return {
    name: c.name,
    sort: c.sortLabel,
    page: c.page,
    rows: last.rows.length,
    total,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    plan: plan.summary,
    countPlan: countPlan.summary,
    url: `/t/bench/operations${serializeOperationsQuery(c.query)}`,
  };
}

type QueueResult = { name: string; p50: number; p95: number; plan: string };

async function measureReconcile(db: Db, tenantId: string, options: Options): Promise<QueueResult[]> {
  // As written in the brief; the reconcile page itself lives elsewhere.
  const queueSql = Prisma.sql`
    SELECT id, tool, principal, state, created_at, updated_at, lease_expires_at, attempt_count, max_attempts, conflict_count, error
    FROM operation
    WHERE tenant_id = ${tenantId} AND (state = 'unknown' OR (state = 'processing' AND lease_expires_at < now()))
    ORDER BY created_at LIMIT 50`;
  // The connections whose tool families the inbox reads (the bench seeds one).
  const connectionIds = (await db.webhookConnection.findMany({ where: { tenantId }, select: { id: true } })).map((c) => c.id);
  const results: QueueResult[] = [];
  for (const [name, run, sql] of [
    ["reconcile queue: oldest 50", () => db.$queryRaw(queueSql), queueSql],
    ["shell: countReconcileQueue() (every console page)", () => countReconcileQueue({ db, tenantId }), null],
    // Every query the inbox page's list makes (page, candidates, tool families, previews), in
    // sequence as the page runs them; the plan shown is the tool-families query, the one that
    // grows with the connection's history.
    ["inbox: listInbox(), first page of 25 (every 15 s while open)", () => listInbox({ db, tenantId, limit: 25 }), connectionFamiliesSql(tenantId, connectionIds)],
  ] as const) {
    for (let i = 0; i < options.warmup; i++) await run();
    const times: number[] = [];
    for (let i = 0; i < options.runs; i++) {
      const t0 = performance.now();
      await run();
      times.push(performance.now() - t0);
    }
    const plan = sql
      ? (await explain(db, sql)).summary
      : (await explain(db, Prisma.sql`SELECT count(*) FROM operation o WHERE o.tenant_id = ${tenantId} AND o.state IN ('unknown', 'processing') AND (o.state = 'unknown' OR o.lease_expires_at < now())`)).summary;
    results.push({ name, p50: percentile(times, 50), p95: percentile(times, 95), plan });
  }
  return results;
}

type ExportResult = { filter: string; rows: number; bytes: number; seconds: number; heapGrowthMb: number };

// Streams the CSV and throws every chunk away, as a network socket would. "Heap growth" is the
// live heap after a forced GC, sampled every 10 batches, minus the heap before: what the
// stream holds on to, which for a true stream is about one batch however long the export.
async function measureExport(db: Db, tenantId: string): Promise<ExportResult> {
  const filter = "tool=payments.refund";
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  gc();
  const heapStart = process.memoryUsage().heapUsed;
  let heapMax = heapStart;
  const t0 = performance.now();
  const reader = exportOperationsCsv({ db, tenantId, query: loadOperationsQuery(filter) }).getReader();
  let bytes = 0;
  let lines = 0;
  let chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    for (const b of value) if (b === 10) lines++;
    if (++chunks % 10 === 0) {
      gc();
      heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
    }
  }
  return { filter, rows: lines - 1, bytes, seconds: (performance.now() - t0) / 1000, heapGrowthMb: (heapMax - heapStart) / 1e6 };
}

// ---------------------------------------------------------------------------------------------
// EXPLAIN

type PlanNode = { "Node Type": string; "Index Name"?: string; "Relation Name"?: string; Plans?: PlanNode[]; "Shared Hit Blocks"?: number; "Shared Read Blocks"?: number };

async function explain(db: Db, sql: Prisma.Sql): Promise<{ summary: string }> {
  const rows = await db.$queryRaw<{ "QUERY PLAN": [{ Plan: PlanNode; "Execution Time": number }] }[]>`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`;
  const root = rows[0]?.["QUERY PLAN"][0];
  if (!root) return { summary: "?" };
  const nodes: PlanNode[] = [];
  const walk = (n: PlanNode) => {
    nodes.push(n);
    for (const child of n.Plans ?? []) walk(child);
  };
  walk(root.Plan);
  const indexes = [...new Set(nodes.flatMap((n) => (n["Index Name"] ? [n["Index Name"]] : [])))];
  const seqScans = nodes.filter((n) => n["Node Type"] === "Seq Scan").length;
  const top = nodes.slice(0, 3).map((n) => n["Node Type"]).join(" → ");
  const buffers = `${root.Plan["Shared Hit Blocks"] ?? 0} hit/${root.Plan["Shared Read Blocks"] ?? 0} read`;
  return {
    summary: `${top}; ${indexes.length ? indexes.map((i) => `\`${i}\``).join(", ") : "no index"}${seqScans ? `; ${seqScans} SEQ SCAN` : ""}; ${root["Execution Time"].toFixed(2)} ms, ${buffers}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Pages over HTTP

type PageResult = { name: string; ttfb50: number; ttfb95: number; full50: number; full95: number; bytes: number };

async function measurePages(baseUrl: string, world: World, cases: Case[], options: Options): Promise<PageResult[]> {
  const cookie = await signIn(baseUrl, world.email, world.password);
  const deep = cases.find((c) => c.name === "no filter" && c.page.startsWith("deep"));
  const unknown = cases.find((c) => c.name === "state = unknown");
  const [op] = await (async () => {
    const db = createDb(withDatabase(options.serverUrl, DB_NAME), 1);
    try {
      return await db.$queryRaw<{ id: string }[]>`SELECT id FROM operation WHERE tenant_id = ${world.tenantId} AND attempt_count = 3 ORDER BY created_at DESC LIMIT 1`;
    } finally {
      await db.$disconnect();
    }
  })();
  const pages: [string, string][] = [
    ["/t/bench/operations (first page)", "/t/bench/operations"],
    ["/t/bench/operations (deep page, keyset cursor)", `/t/bench/operations${serializeOperationsQuery(deep?.query ?? {})}`],
    ["/t/bench/operations?state=unknown (deep)", `/t/bench/operations${serializeOperationsQuery(unknown?.query ?? {})}`],
    ["/t/bench/operations?conflicts=true", "/t/bench/operations?conflicts=true"],
    ["/t/bench/operations/<id> (trace, 3 attempts)", `/t/bench/operations/${op?.id ?? "missing"}`],
  ];
  const results: PageResult[] = [];
  for (const [name, url] of pages) {
    const ttfb: number[] = [];
    const full: number[] = [];
    let bytes = 0;
    for (let i = 0; i < options.warmup + options.runs; i++) {
      const t0 = performance.now();
      const res = await fetch(`${baseUrl}${url}`, { headers: { cookie }, redirect: "manual" });
      const t1 = performance.now();
      const body = await res.text();
      const t2 = performance.now();
      if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
      if (i < options.warmup) continue;
      ttfb.push(t1 - t0);
      full.push(t2 - t0);
      bytes = body.length;
    }
    results.push({ name, ttfb50: percentile(ttfb, 50), ttfb95: percentile(ttfb, 95), full50: percentile(full, 50), full95: percentile(full, 95), bytes });
  }
  return results;
}

type HttpExportResult = { filter: string; status: number; disposition: string; rows: number; bytes: number; ttfbMs: number; totalMs: number; rssBeforeMb: number; rssMaxMb: number };

// The export as a browser downloads it, while the server's resident memory is sampled.
async function measureHttpExport(server: BenchServer, world: World): Promise<HttpExportResult> {
  const cookie = await signIn(server.baseUrl, world.email, world.password);
  const filter = "tool=payments.refund";
  const rss = () => {
    const line = readFileSync(`/proc/${server.pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
    return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) / 1024;
  };
  const rssBeforeMb = rss();
  let rssMaxMb = rssBeforeMb;
  const sampler = setInterval(() => (rssMaxMb = Math.max(rssMaxMb, rss())), 50);
  const t0 = performance.now();
  const res = await fetch(`${server.baseUrl}/api/console/bench/operations/export?${filter}`, { headers: { cookie } });
  const ttfbMs = performance.now() - t0;
  let bytes = 0;
  let lines = 0;
  const reader = res.body?.getReader();
  for (;;) {
    const chunk = await reader?.read();
    if (!chunk || chunk.done) break;
    bytes += chunk.value.byteLength;
    for (const b of chunk.value) if (b === 10) lines++;
  }
  const totalMs = performance.now() - t0;
  clearInterval(sampler);
  return { filter, status: res.status, disposition: res.headers.get("content-disposition") ?? "", rows: lines - 1, bytes, ttfbMs, totalMs, rssBeforeMb, rssMaxMb };
}

// next-auth's credentials flow, as a browser does it: CSRF token (and its cookie), then the form post.
async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, ...value] = (pair ?? "").split("=");
      if (name) jar.set(name.trim(), value.join("="));
    }
  };
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  keep(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieHeader() },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
    redirect: "manual",
  });
  keep(res);
  if (![...jar.keys()].some((k) => k.includes("session-token"))) throw new Error(`sign-in failed (${res.status})`);
  return cookieHeader();
}

// ---------------------------------------------------------------------------------------------

// One build per source version is enough: drop the older ones (they are 100+ MB each).
function pruneOldBuilds(root: string, current: string): void {
  for (const name of readdirSync(root)) {
    const dir = path.join(root, name);
    if (path.resolve(dir) !== path.resolve(current) && !name.endsWith(".build-lock") && statSync(dir).isDirectory()) rmSync(dir, { recursive: true, force: true });
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function fmt(n: number): string {
  return new Intl.NumberFormat("en-US").format(n);
}

// Run directly: npx tsx bench/console-bench.ts [options]
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename ?? "") && existsSync(process.argv[1])) {
  runConsoleBench(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`console-bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
