-- Two mends to reconciliation probes (the others are in lib/probes: header values and the
-- probe URL checked when the tool is saved, errors described in fixed words, 2xx-only rules).

-- ---------------------------------------------------------------------------------------------
-- Every time an operation becomes unknown it gets a fresh probe budget and is probed at once.
-- probe_count and next_probe_at were never reset: an operation unknown a second time (an
-- operator's retry, then a new attempt that timed out) had used up maxProbes in its first
-- episode and was never probed again. A trigger, because many paths make an operation unknown
-- (an agent's report, the lease reaper, a claim that finds the lease expired) and a later one
-- must not forget. The WHEN clause is evaluated without entering plpgsql: other updates pay nothing.
CREATE FUNCTION tollgate_fresh_probe_budget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.probe_count := 0;
  NEW.next_probe_at := NULL;
  RETURN NEW;
END $$;

CREATE TRIGGER operation_fresh_probe_budget BEFORE UPDATE ON operation FOR EACH ROW
  WHEN (NEW.state = 'unknown' AND OLD.state IS DISTINCT FROM 'unknown')
  EXECUTE FUNCTION tollgate_fresh_probe_budget();

-- Operations unknown now whose count is from an earlier episode: no probe recorded since their
-- newest attempt started. (updated_at untouched: nothing a person did changed.)
UPDATE operation o SET probe_count = 0, next_probe_at = NULL
WHERE o.state = 'unknown' AND o.probe_count > 0
  AND NOT EXISTS (
    SELECT 1 FROM audit_event a
    WHERE a.tenant_id = o.tenant_id AND a.target_type = 'operation' AND a.target_id = o.id AND a.action = 'operation.probed'
      AND a.created_at >= (SELECT max(t.started_at) FROM attempt t WHERE t.tenant_id = o.tenant_id AND t.operation_id = o.id));

-- ---------------------------------------------------------------------------------------------
-- A probe's verdict settles only the episode it was booked for. tollgate_record_probe called
-- tollgate_resolve, which also takes a processing operation whose lease expired: a probe booked
-- for attempt 1's unknown, then an operator's retry, then attempt 2's lease running out, and
-- attempt 1's answer settled attempt 2. The probe now carries the fencing token it was booked
-- under, and its verdict is applied only while the operation is still unknown under that token;
-- otherwise it is recorded as stale (audited, shown on the trace) and settles nothing.
-- The signatures change, so the old functions go: nothing may call the unfenced one.
DROP FUNCTION tollgate_take_due_probes(int, int, int, int);
DROP FUNCTION tollgate_record_probe(text, text, int, text, int, text, text, text);

-- As before (books the probe before it runs, under SKIP LOCKED), and returns the fencing token.
CREATE FUNCTION tollgate_take_due_probes(p_limit int, p_base_seconds int, p_cap_seconds int, p_default_max int)
RETURNS TABLE (operation_id text, tenant_id text, tool text, downstream_key text, resource_id text, probe jsonb, probe_number int,
  fencing_token bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH due AS (
    SELECT o.id, t.probe AS tool_probe FROM operation o JOIN tool t ON t.tenant_id = o.tenant_id AND t.name = o.tool
    WHERE o.state = 'unknown' AND t.probe IS NOT NULL
      AND o.probe_count < coalesce((t.probe ->> 'maxProbes')::int, p_default_max)
      AND (o.next_probe_at IS NULL OR o.next_probe_at <= now())
    ORDER BY o.next_probe_at NULLS FIRST LIMIT p_limit
    FOR UPDATE OF o SKIP LOCKED
  )
  UPDATE operation o SET probe_count = o.probe_count + 1,
    next_probe_at = now() + make_interval(secs => least(p_cap_seconds::double precision,
      p_base_seconds * power(2::double precision, least(o.probe_count, 30))))
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
-- the budget and the next one waits that long. The audit's `resolved` says what became of it:
-- resolved, no (inconclusive), stale (the operation moved on to a retry or another attempt) or
-- already-settled (settled meanwhile by an operator or a webhook).
CREATE FUNCTION tollgate_record_probe(p_tenant_id text, p_op_id text, p_token bigint, p_probe_number int, p_verdict text,
  p_status int, p_summary text, p_resource_id text, p_evidence text, p_not_counted_retry_seconds int) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_found boolean;
  v_current boolean;
  v_fate text;
  v_attempt int;
BEGIN
  -- Locked until the end, so the state read here is the one tollgate_resolve sees.
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
    END IF;
  ELSIF v_found AND v_op.fencing_token IS NOT DISTINCT FROM p_token AND v_op.state IN ('succeeded', 'failed', 'rejected') THEN
    v_fate := 'already-settled';
  ELSE
    v_fate := 'stale';
  END IF;
  PERFORM tollgate_audit(p_tenant_id, 'system:probe', 'operation.probed', p_op_id, NULL,
    jsonb_build_object('probe', p_probe_number, 'verdict', p_verdict, 'status', p_status, 'resolved', v_fate,
      'attempt', v_attempt, 'counted', p_not_counted_retry_seconds IS NULL), p_summary);
  RETURN jsonb_build_object('code', CASE v_fate WHEN 'resolved' THEN 'resolved' WHEN 'stale' THEN 'stale' ELSE 'recorded' END);
END $$;
