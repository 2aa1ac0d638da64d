import type pg from "pg";
import type { BenchWorld } from "./database";

// Grows the operation table to a target size with one INSERT … SELECT FROM generate_series: a
// day of history spread over a few tools and principals and over every state, each row with
// the attempt row its state implies. Every CHECK constraint holds (processing rows have a lease
// and a fencing token, terminal rows a result expiry), key digests and downstream keys are
// unique, fencing tokens come from the real sequence. VACUUM ANALYZE afterwards, as autovacuum would.
//
// Speed: inserting a million random SHA-256 key digests into a live unique index thrashes a
// default 128 MB shared_buffers (about 2.5 minutes on the 2-core box). So, inside the seeding
// transaction, the secondary indexes of operation and attempt are dropped and then re-created
// from their own definitions (pg_get_indexdef), the standard bulk-load recipe: the schema
// afterwards is identical; only the re-built indexes are denser than organically split ones.
//
// State mix (per 100 rows): 70 succeeded, 10 failed, 6 processing (half with a live lease),
// 4 pending (retry scheduled), 4 unknown, 3 awaiting_approval, 3 rejected.

const SEED_SQL = `
WITH p AS (
  SELECT $1::text AS tenant_id, $2::text[] AS principals, $3::text[] AS tools, $4::text AS tag,
    setval('fencing_token_seq', nextval('fencing_token_seq') + $5::bigint) - $5::bigint AS token_base
), g AS (
  SELECT g, p.*, g % 100 AS bucket,
    now() - make_interval(secs => 86400.0 * ($5::int - g) / $5::int) AS created
  FROM p, generate_series(1, $5::int) AS g
), rows AS (
  SELECT g.*,
    (CASE WHEN bucket < 70 THEN 'succeeded' WHEN bucket < 80 THEN 'failed' WHEN bucket < 86 THEN 'processing'
      WHEN bucket < 90 THEN 'pending' WHEN bucket < 94 THEN 'unknown' WHEN bucket < 97 THEN 'awaiting_approval'
      ELSE 'rejected' END)::operation_state AS state
  FROM g
), ins AS (
  INSERT INTO operation (id, tenant_id, principal, tool, key_digest, fingerprint, args, state, max_attempts, attempt_count,
    fencing_token, lease_expires_at, not_before, downstream_key, result, error, completed_at, result_expires_at, created_at, updated_at)
  SELECT 'op_seed' || tag || '_' || lpad(g::text, 8, '0'), tenant_id,
    principals[1 + g % cardinality(principals)], tools[1 + (g / 7) % cardinality(tools)],
    encode(sha256(convert_to('seed-' || tag || '-' || g, 'UTF8')), 'hex'),
    'v1:' || encode(sha256(convert_to('args-' || (g % 5000), 'UTF8')), 'hex'),
    jsonb_build_object('to', 'customer' || (g % 5000) || '@example.com', 'amount', g % 10000, 'currency', 'eur'),
    state, 3,
    CASE WHEN state IN ('awaiting_approval', 'rejected') THEN 0 ELSE 1 END,
    CASE WHEN state IN ('awaiting_approval', 'rejected') THEN NULL ELSE token_base + g END,
    CASE WHEN state = 'processing' THEN (CASE WHEN g % 2 = 0 THEN now() + interval '10 minutes' ELSE created + interval '60 seconds' END) END,
    CASE WHEN state = 'pending' THEN now() + interval '30 seconds' END,
    'dk_seed' || tag || '_' || lpad(g::text, 8, '0'),
    CASE WHEN state = 'succeeded' THEN jsonb_build_object('statusCode', 201, 'body', jsonb_build_object('id', 'ch_' || g), 'resourceId', 'ch_' || g) END,
    CASE WHEN state IN ('failed', 'pending', 'unknown') THEN jsonb_build_object('code', 'provider-error', 'message', 'card declined')
      WHEN state = 'rejected' THEN jsonb_build_object('code', 'approval-rejected', 'message', 'rejected') END,
    CASE WHEN state IN ('succeeded', 'failed', 'rejected') THEN created + interval '2 seconds' END,
    CASE WHEN state IN ('succeeded', 'failed', 'rejected') THEN created + interval '24 hours' END,
    created, created + interval '2 seconds'
  FROM rows
  RETURNING id, tenant_id, principal, state, fencing_token, lease_expires_at, created_at
)
INSERT INTO attempt (id, tenant_id, operation_id, number, fencing_token, principal, api_key_id, started_at, ended_at, lease_expires_at,
  outcome, complete_digest)
SELECT 'att_' || substr(id, 4), tenant_id, id, 1, fencing_token, principal, NULL, created_at,
  CASE WHEN state <> 'processing' THEN created_at + interval '2 seconds' END,
  coalesce(lease_expires_at, created_at + interval '60 seconds'),
  (CASE state WHEN 'succeeded' THEN 'succeeded' WHEN 'failed' THEN 'failed' WHEN 'pending' THEN 'retryable_failure'
    WHEN 'unknown' THEN 'unknown' END)::attempt_outcome,
  CASE WHEN state <> 'processing' THEN md5(id) END
FROM ins WHERE fencing_token IS NOT NULL`;

export async function seedOperations(options: {
  pool: pg.Pool;
  world: BenchWorld;
  count: number;
  tag: string;
  skipForeignKeyChecks?: boolean;
}): Promise<{ seconds: number; steps: Record<string, number> }> {
  const started = performance.now();
  const steps: Record<string, number> = {};
  let last = started;
  const step = (name: string) => {
    const now = performance.now();
    steps[name] = Math.round(now - last) / 1000;
    last = now;
  };
  if (options.count > 0) {
    const { world } = options;
    const client = await options.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL maintenance_work_mem = '256MB'");
      if (options.skipForeignKeyChecks ?? true) {
        // The rows reference the tenant and their own operations by construction: skip the
        // per-row foreign-key triggers when allowed (superuser); otherwise they just run.
        await client.query("SAVEPOINT fk");
        await client.query("SET LOCAL session_replication_role = replica").then(
          () => client.query("RELEASE SAVEPOINT fk"),
          () => client.query("ROLLBACK TO SAVEPOINT fk"),
        );
      }
      const { rows: indexes } = await client.query<{ name: string; def: string }>(
        `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i
         WHERE i.indrelid IN ('operation'::regclass, 'attempt'::regclass)
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
      );
      for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
      step("prepare");
      await client.query(SEED_SQL, [world.tenantId, world.seedPrincipals, world.seedTools, options.tag, options.count]);
      step("insert");
      for (const index of indexes) await client.query(index.def);
      step("indexes");
      await client.query("COMMIT");
      step("commit");
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    } finally {
      client.release();
    }
    // What autovacuum would have done by now (statistics, hint bits, visibility map), and a
    // checkpoint, so the seeding's gigabyte of WAL is not flushed during the measurements.
    await options.pool.query("VACUUM (ANALYZE) operation, attempt");
    step("vacuum");
    await options.pool.query("CHECKPOINT").catch(() => undefined); // needs superuser or pg_checkpoint
    step("checkpoint");
  }
  return { seconds: (performance.now() - started) / 1000, steps };
}

export async function countOperations(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM operation");
  return Number(rows[0]?.n ?? 0);
}
