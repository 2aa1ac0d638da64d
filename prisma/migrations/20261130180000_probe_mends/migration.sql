-- Mends to reconciliation probes (the others are in lib/probes: header values and the probe URL
-- checked when the tool is saved, errors described in fixed words, 2xx-only rules).

-- ---------------------------------------------------------------------------------------------
-- Every time an operation becomes unknown it gets a fresh probe budget and is probed at once.
-- probe_count and next_probe_at were never reset: an operation unknown a second time (an
-- operator's retry, then a new attempt that timed out) had used up maxProbes in its first
-- episode and was never probed again. probe_budget_token records which fencing token the count
-- and the schedule were booked under; tollgate_take_due_probes reads them as 0 and NULL under any
-- other token (each unknown episode ends an attempt of its own, and each attempt has its own
-- token) and sets it when it books. Not a trigger: whatever its WHEN clause says, a BEFORE row
-- trigger on operation makes PostgreSQL fetch and lock the old tuple (GetTupleForTrigger: a tuple
-- lock and its WAL record) on every update of the table, the protocol's hot path included.
ALTER TABLE "operation" ADD COLUMN "probe_budget_token" BIGINT;

-- Operations unknown now whose count is from an earlier episode: no probe recorded since their
-- newest attempt started. (updated_at untouched: nothing a person did changed.)
UPDATE operation o SET probe_count = 0, next_probe_at = NULL
WHERE o.state = 'unknown' AND o.probe_count > 0
  AND NOT EXISTS (
    SELECT 1 FROM audit_event a
    WHERE a.tenant_id = o.tenant_id AND a.target_type = 'operation' AND a.target_id = o.id AND a.action = 'operation.probed'
      AND a.created_at >= (SELECT max(t.started_at) FROM attempt t WHERE t.tenant_id = o.tenant_id AND t.operation_id = o.id));

-- Operations unknown now: their count (reset above if it was an earlier episode's) is this one's.
UPDATE operation SET probe_budget_token = fencing_token WHERE state = 'unknown';

-- ---------------------------------------------------------------------------------------------
-- A probe's verdict settles only the episode it was booked for. tollgate_record_probe called
-- tollgate_resolve, which also takes a processing operation whose lease expired: a probe booked
-- for attempt 1's unknown, then an operator's retry, then attempt 2's lease running out, and
-- attempt 1's answer settled attempt 2. The probe now carries the fencing token it was booked
-- under, and its verdict is applied only while the operation is still unknown under that token;
-- otherwise it is recorded as stale (audited, shown on the trace) and settles nothing.
DROP FUNCTION tollgate_take_due_probes(int, int, int, int);
DROP FUNCTION tollgate_record_probe(text, text, int, text, int, text, text, text);

-- As before (books the probe before it runs, under SKIP LOCKED), returns the fencing token, and
-- counts this episode's probes only.
CREATE FUNCTION tollgate_take_due_probes(p_limit int, p_base_seconds int, p_cap_seconds int, p_default_max int)
RETURNS TABLE (operation_id text, tenant_id text, tool text, downstream_key text, resource_id text, probe jsonb, probe_number int,
  fencing_token bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH due AS (
    SELECT o.id, t.probe AS tool_probe, b.spent FROM operation o JOIN tool t ON t.tenant_id = o.tenant_id AND t.name = o.tool
    -- This episode's count and next probe time: none yet when they were booked under another token.
    CROSS JOIN LATERAL (SELECT o.probe_budget_token IS NOT DISTINCT FROM o.fencing_token AS ours) c
    CROSS JOIN LATERAL (SELECT CASE WHEN c.ours THEN o.probe_count ELSE 0 END AS spent,
      CASE WHEN c.ours THEN o.next_probe_at END AS next_at) b
    WHERE o.state = 'unknown' AND t.probe IS NOT NULL
      AND b.spent < coalesce((t.probe ->> 'maxProbes')::int, p_default_max)
      AND (b.next_at IS NULL OR b.next_at <= now())
    ORDER BY b.next_at NULLS FIRST LIMIT p_limit
    FOR UPDATE OF o SKIP LOCKED
  )
  UPDATE operation o SET probe_count = due.spent + 1, probe_budget_token = o.fencing_token,
    next_probe_at = now() + make_interval(secs => least(p_cap_seconds::double precision,
      p_base_seconds * power(2::double precision, least(due.spent, 30))))
  FROM due WHERE o.id = due.id
  RETURNING o.id, o.tenant_id, o.tool, o.downstream_key,
    coalesce(o.result ->> 'resourceId',
      (SELECT a.provider ->> 'resourceId' FROM attempt a WHERE a.tenant_id = o.tenant_id AND a.operation_id = o.id
        AND a.provider ->> 'resourceId' IS NOT NULL ORDER BY a.number DESC LIMIT 1),
      (SELECT e.provider_resource_id FROM side_effect e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id
        AND e.provider_resource_id IS NOT NULL ORDER BY e.updated_at DESC LIMIT 1)),
    due.tool_probe, o.probe_count, o.fencing_token;
END $$;

-- Records what a probe found (audited on the operation) and, when conclusive and still current
-- (unknown, same token), resolves the operation through tollgate_resolve (via 'probe'), in one
-- transaction. p_not_counted_retry_seconds, when set, is a probe that asked the provider nothing
-- for a reason of the server's or the tool's (lib/probes/run-due-probes.ts): it is given back to
-- the budget and the next one waits that long; it is tried again for as long as the cause lasts
-- (cheap, and how the fix is noticed), but its audit row is written only when the operation's
-- latest operation.probed row is not already a skip of the same attempt, not counted, for the
-- same reason (found on audit_event_tenant_id_target_type_target_id_id_idx, read backwards): the
-- trace shows the reason once, from when it began, not 24 rows a day. The audit's `resolved`
-- says what became of a probe: resolved, no (inconclusive), stale (the operation moved on to a
-- retry or another attempt) or already-settled (settled meanwhile by an operator or a webhook).
CREATE FUNCTION tollgate_record_probe(p_tenant_id text, p_op_id text, p_token bigint, p_probe_number int, p_verdict text,
  p_status int, p_summary text, p_resource_id text, p_evidence text, p_not_counted_retry_seconds int) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_found boolean;
  v_current boolean;
  v_fate text;
  v_attempt int;
  v_last audit_event;
  v_write boolean := true;
BEGIN
  -- Locked until the end, so the state read here is the one tollgate_resolve sees (and two
  -- records for one operation, hence their look at its latest row, take turns).
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  v_found := FOUND;
  v_current := v_found AND v_op.state = 'unknown' AND v_op.fencing_token IS NOT DISTINCT FROM p_token;
  SELECT number INTO v_attempt FROM attempt WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token;
  IF v_current AND p_verdict IN ('succeeded', 'failed') THEN
    v_fate := tollgate_resolve(p_tenant_id, p_op_id, p_verdict, p_summary, p_resource_id, p_evidence, 'system:probe', 'probe') ->> 'code';
  ELSIF v_current THEN
    v_fate := 'no';
    IF p_not_counted_retry_seconds IS NOT NULL THEN
      UPDATE operation SET probe_count = greatest(probe_count - 1, 0),
        next_probe_at = now() + make_interval(secs => p_not_counted_retry_seconds)
      WHERE id = p_op_id;
      SELECT * INTO v_last FROM audit_event a
      WHERE a.tenant_id = p_tenant_id AND a.target_type = 'operation' AND a.target_id = p_op_id AND a.action = 'operation.probed'
      ORDER BY a.id DESC LIMIT 1;
      v_write := NOT (FOUND AND v_last.after ->> 'verdict' = 'skipped' AND v_last.after ->> 'counted' = 'false'
        AND v_last.reason IS NOT DISTINCT FROM p_summary
        AND (v_last.after -> 'attempt') IS NOT DISTINCT FROM to_jsonb(v_attempt));
    END IF;
  ELSIF v_found AND v_op.fencing_token IS NOT DISTINCT FROM p_token AND v_op.state IN ('succeeded', 'failed', 'rejected') THEN
    v_fate := 'already-settled';
  ELSE
    v_fate := 'stale';
  END IF;
  IF v_write THEN
    PERFORM tollgate_audit(p_tenant_id, 'system:probe', 'operation.probed', p_op_id, NULL,
      jsonb_build_object('probe', p_probe_number, 'verdict', p_verdict, 'status', p_status, 'resolved', v_fate,
        'attempt', v_attempt, 'counted', p_not_counted_retry_seconds IS NULL), p_summary);
  END IF;
  RETURN jsonb_build_object('code', CASE v_fate WHEN 'resolved' THEN 'resolved' WHEN 'stale' THEN 'stale' ELSE 'recorded' END);
END $$;

-- Rolling deploys: a worker still running the previous release calls the 8-argument signature.
-- It stays, as a wrapper: such a probe carries no fencing token, so it cannot say which attempt
-- it asked about and is recorded as stale (audited, on the trace) and settles nothing, until the
-- worker is restarted. Its booking counted against maxProbes; the new workers carry on from there.
CREATE FUNCTION tollgate_record_probe(p_tenant_id text, p_op_id text, p_probe_number int, p_verdict text, p_status int,
  p_summary text, p_resource_id text, p_evidence text) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  RETURN tollgate_record_probe(p_tenant_id, p_op_id, NULL::bigint, p_probe_number, p_verdict, p_status, p_summary,
    p_resource_id, p_evidence, NULL::int);
END $$;
