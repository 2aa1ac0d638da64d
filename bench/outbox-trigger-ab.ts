// `npx tsx bench/outbox-trigger-ab.ts`: what the outbox trigger costs tollgate_complete, straight to
// PostgreSQL (no HTTP), on a fresh database: the trigger disabled vs enabled with no subscriber
// (twice, alternating), then with one subscriber (event + delivery + graphile-worker job), then with
// one subscriber but no job (rows only), at concurrency 1 and 8. DATABASE_URL names the server.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { migrate } from "@/lib/db/migrate";

const server = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
const name = `i7_ab_${Date.now()}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const target = new URL(server);
target.pathname = `/${name}`;
const url = target.toString();
await migrate({ databaseUrl: url, migrationsDir: "prisma/migrations" });
const pool = new pg.Pool({ connectionString: url, max: 8 });
await pool.query(`INSERT INTO tenant (id, slug, name) VALUES ('ten_1','ab','AB');
  INSERT INTO api_key (id, tenant_id, hash, prefix, principal, role) VALUES ('key_1','ten_1','h','p','agent','agent');
  INSERT INTO tool (id, tenant_id, name, lease_seconds) VALUES ('tool_1','ten_1','t.x', 3600);`);

async function prepare(n: number): Promise<{ id: string; token: string }[]> {
  const out: { id: string; token: string }[] = [];
  for (let i = 0; i < n; i++) {
    const id = `op_${randomUUID()}`;
    const r = await pool.query("SELECT tollgate_claim('ten_1','key_1','agent','t.x',$1,'v1:f','{}',NULL,NULL,$2,$3,'api-key:key_1') AS r", [randomUUID(), id, `dk_${id}`]);
    out.push({ id, token: r.rows[0].r.attempt.fencingToken });
  }
  return out;
}

async function run(label: string, ops: { id: string; token: string }[], concurrency: number, seconds: number) {
  let next = 0;
  let done = 0;
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < until && next < ops.length) {
      const op = ops[next++]!;
      const t = performance.now();
      await pool.query("SELECT tollgate_complete('ten_1','key_1','{}',$1,$2,'succeeded',false,NULL,NULL,NULL,$3,'api-key:key_1') AS r", [op.id, op.token, randomUUID()]);
      latencies.push(performance.now() - t);
      done++;
    }
  }));
  latencies.sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
  console.log(`${label.padEnd(34)} c=${concurrency} ${(done / seconds).toFixed(0).padStart(5)} completes/s  p50 ${p50.toFixed(2)} ms`);
}

const seconds = 4;
for (const c of [1, 8]) {
  for (const round of [1, 2]) {
    await pool.query("ALTER TABLE operation DISABLE TRIGGER operation_events");
    await run(`round ${round}: no trigger`, await prepare(c === 1 ? 6000 : 12000), c, seconds);
    await pool.query("ALTER TABLE operation ENABLE TRIGGER operation_events");
    await run(`round ${round}: trigger, no subscriber`, await prepare(c === 1 ? 6000 : 12000), c, seconds);
  }
  await pool.query("INSERT INTO event_subscription (id, tenant_id, name, url, events, secret_encrypted) VALUES ($1,'ten_1',$1,'http://x',ARRAY['operation.succeeded'],'x')", [`sub_${c}`]);
  await run("trigger, 1 subscriber (event+job)", await prepare(c === 1 ? 6000 : 12000), c, seconds);
  await pool.query("ALTER FUNCTION tollgate_enqueue_delivery(text, timestamptz) RENAME TO enqueue_saved");
  await pool.query("CREATE FUNCTION tollgate_enqueue_delivery(p text, r timestamptz) RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$");
  await run("trigger, 1 subscriber, rows only", await prepare(c === 1 ? 6000 : 12000), c, seconds);
  await pool.query("DROP FUNCTION tollgate_enqueue_delivery(text, timestamptz)");
  await pool.query("ALTER FUNCTION enqueue_saved(text, timestamptz) RENAME TO tollgate_enqueue_delivery");
  await pool.query("DELETE FROM event_subscription");
}
pool.on("error", () => undefined);
await pool.end();
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
