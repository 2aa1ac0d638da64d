import type { Db } from "@/lib/db";

// target: "operation:<id>", "api_key:<id>", "user:<id>", "tool:<name>", or "*" for the setup.
// From real time r on (until the target's next breakpoint), its writes belong at story time v.
export type Breakpoint = { target: string; r: Date; v: Date };

// Moves every timestamp the demo seed wrote from the few seconds it really took to the story
// time of the step that wrote it. Values computed from "now" keep their distance from the
// moment they were computed: a lease stays leaseSeconds after its claim or heartbeat, a
// backoff after its failure, a retention after its completion, an approval's expiry after
// its request. One transaction; the audit log's append-only trigger is switched off inside it
// for this one rewrite of a freshly seeded tenant (no other session can see the table
// meanwhile: ALTER TABLE holds an exclusive lock until commit).
export async function shiftDemoHistory(options: { db: Db; tenantId: string; breakpoints: Breakpoint[] }): Promise<void> {
  const { tenantId, breakpoints } = options;
  await options.db.$transaction(async (tx) => {
    await tx.$executeRaw`CREATE TEMP TABLE demo_bp (target text NOT NULL, r timestamptz NOT NULL, v timestamptz NOT NULL) ON COMMIT DROP`;
    await tx.$executeRaw`
      INSERT INTO demo_bp SELECT * FROM unnest(${breakpoints.map((b) => b.target)}::text[],
        ${breakpoints.map((b) => b.r.toISOString())}::timestamptz[], ${breakpoints.map((b) => b.v.toISOString())}::timestamptz[])`;
    await tx.$executeRaw`CREATE INDEX ON demo_bp (target, r)`;
    await tx.$executeRawUnsafe(`
      CREATE FUNCTION pg_temp.demo_at(p_target text, p_ts timestamptz) RETURNS timestamptz LANGUAGE sql STABLE AS $$
        SELECT p_ts + coalesce(
          (SELECT b.v - b.r FROM demo_bp b WHERE b.target = p_target AND b.r <= p_ts ORDER BY b.r DESC LIMIT 1),
          (SELECT b.v - b.r FROM demo_bp b WHERE b.target = '*'))
      $$`);
    await tx.$executeRaw`
      UPDATE operation o SET
        created_at = pg_temp.demo_at('operation:' || o.id, o.created_at),
        updated_at = pg_temp.demo_at('operation:' || o.id, o.updated_at),
        completed_at = pg_temp.demo_at('operation:' || o.id, o.completed_at),
        last_conflict_at = pg_temp.demo_at('operation:' || o.id, o.last_conflict_at),
        last_replay_at = pg_temp.demo_at('operation:' || o.id, o.last_replay_at),
        last_heartbeat_at = pg_temp.demo_at('operation:' || o.id, o.last_heartbeat_at),
        flagged_at = pg_temp.demo_at('operation:' || o.id, o.flagged_at),
        lease_expires_at = pg_temp.demo_at('operation:' || o.id, o.lease_expires_at - make_interval(secs => t.lease_seconds)) + make_interval(secs => t.lease_seconds),
        not_before = o.not_before + (pg_temp.demo_at('operation:' || o.id, o.updated_at) - o.updated_at),
        result_expires_at = o.result_expires_at + (pg_temp.demo_at('operation:' || o.id, coalesce(o.completed_at, o.updated_at)) - coalesce(o.completed_at, o.updated_at)),
        resolution = CASE WHEN o.resolution ? 'at' THEN jsonb_set(o.resolution, '{at}', to_jsonb(pg_temp.demo_at('operation:' || o.id, (o.resolution ->> 'at')::timestamptz))) ELSE o.resolution END
      FROM tool t WHERE o.tenant_id = ${tenantId} AND t.tenant_id = o.tenant_id AND t.name = o.tool`;
    await tx.$executeRaw`
      UPDATE attempt a SET
        started_at = pg_temp.demo_at('operation:' || a.operation_id, a.started_at),
        ended_at = pg_temp.demo_at('operation:' || a.operation_id, a.ended_at),
        lease_expires_at = pg_temp.demo_at('operation:' || a.operation_id, a.lease_expires_at - make_interval(secs => t.lease_seconds)) + make_interval(secs => t.lease_seconds)
      FROM operation o, tool t
      WHERE a.tenant_id = ${tenantId} AND o.id = a.operation_id AND t.tenant_id = o.tenant_id AND t.name = o.tool`;
    await tx.$executeRaw`
      UPDATE approval SET
        created_at = pg_temp.demo_at('operation:' || operation_id, created_at),
        expires_at = expires_at + (pg_temp.demo_at('operation:' || operation_id, created_at) - created_at),
        decided_at = pg_temp.demo_at('operation:' || operation_id, decided_at)
      WHERE tenant_id = ${tenantId}`;
    await tx.$executeRaw`ALTER TABLE audit_event DISABLE TRIGGER audit_event_append_only`;
    await tx.$executeRaw`
      UPDATE audit_event SET
        created_at = pg_temp.demo_at(target_type || ':' || target_id, created_at),
        after = CASE WHEN after ? 'notBefore' AND jsonb_typeof(after -> 'notBefore') = 'string'
          THEN jsonb_set(after, '{notBefore}', to_jsonb((after ->> 'notBefore')::timestamptz + (pg_temp.demo_at(target_type || ':' || target_id, created_at) - created_at)))
          ELSE after END
      WHERE tenant_id = ${tenantId}`;
    await tx.$executeRaw`ALTER TABLE audit_event ENABLE TRIGGER audit_event_append_only`;
    await tx.$executeRaw`UPDATE tenant SET created_at = pg_temp.demo_at('tenant:' || id, created_at) WHERE id = ${tenantId}`;
    await tx.$executeRaw`UPDATE tool SET created_at = pg_temp.demo_at('tool:' || name, created_at), updated_at = pg_temp.demo_at('tool:' || name, updated_at) WHERE tenant_id = ${tenantId}`;
    await tx.$executeRaw`
      UPDATE api_key k SET created_at = pg_temp.demo_at('api_key:' || k.id, k.created_at), revoked_at = pg_temp.demo_at('api_key:' || k.id, k.revoked_at),
        last_used_at = (SELECT max(a.started_at) FROM attempt a WHERE a.tenant_id = k.tenant_id AND a.api_key_id = k.id)
      WHERE k.tenant_id = ${tenantId}`;
    // Users are global; only the ones the seed made (members of this tenant, or of all tenants).
    await tx.$executeRaw`
      UPDATE app_user u SET created_at = pg_temp.demo_at('user:' || u.id, u.created_at), disabled_at = pg_temp.demo_at('user:' || u.id, u.disabled_at)
      WHERE u.all_tenants OR EXISTS (SELECT 1 FROM user_tenant m WHERE m.user_id = u.id AND m.tenant_id = ${tenantId})`;
    await tx.$executeRawUnsafe(`DROP FUNCTION pg_temp.demo_at(text, timestamptz)`);
  }, { timeout: 30_000 });
}
