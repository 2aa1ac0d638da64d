-- The operation view every SQL function returns gains the key digest's 16-hex prefix (what the
-- console shows), so a complete's, heartbeat's or resolve's log line carries it as the claim's
-- does (the raw key is never stored). The rest is the view as first declared; outbox events
-- (`data.operation`) carry it too. LANGUAGE sql, a single SELECT of expressions: still inlined.
CREATE OR REPLACE FUNCTION tollgate_op_view(o operation) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'operationId', o.id, 'tool', o.tool, 'state', o.state, 'attempts', o.attempt_count,
    'leaseExpiresAt', o.lease_expires_at, 'notBefore', o.not_before, 'downstreamKey', o.downstream_key,
    'result', o.result, 'error', o.error, 'resultExpiresAt', o.result_expires_at,
    'createdAt', o.created_at, 'updatedAt', o.updated_at, 'resolution', o.resolution,
    'workflowId', o.workflow_id, 'principal', o.principal, 'keyDigest', left(o.key_digest, 16))
$$;

-- A heartbeat's log line names the operation as a complete's does: its accepted answers return
-- the tool, the attempt, the workflow id and the key digest beside the lease (values the UPDATE
-- already has in hand). tollgate_heartbeat (from 20261201020000_heartbeat_keeps_settled_attempt)
-- re-declared whole; only the lines marked [changed] differ.
CREATE OR REPLACE FUNCTION tollgate_heartbeat(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text, p_token bigint)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_lease timestamptz;
  v_log jsonb; -- [changed]
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  UPDATE operation o SET lease_expires_at = now() + make_interval(secs => t.lease_seconds), heartbeat_count = heartbeat_count + 1,
    last_heartbeat_at = now()
  FROM tool t
  WHERE o.id = p_op_id AND o.tenant_id = p_tenant_id AND o.state = 'processing' AND o.fencing_token = p_token
    AND t.tenant_id = o.tenant_id AND t.name = o.tool AND (cardinality(p_allowed_tools) = 0 OR o.tool = ANY (p_allowed_tools))
  RETURNING o.lease_expires_at, -- [changed] the log fields beside the lease
    jsonb_build_object('tool', o.tool, 'attempt', o.attempt_count, 'workflowId', o.workflow_id, 'keyDigest', left(o.key_digest, 16))
  INTO v_lease, v_log;
  IF FOUND THEN
    UPDATE attempt SET lease_expires_at = v_lease WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token;
    RETURN jsonb_build_object('code', 'ok', 'leaseExpiresAt', v_lease, 'log', v_log); -- [changed]
  END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  -- The attempt a settle left open (a webhook or an inbox match got there first) keeps
  -- its lease while it works, as before the settle: otherwise the reaper ended a long call at its
  -- first lease and the agent's agreeing result was never stored. Conditions re-checked under the
  -- row's lock, so a reaper that got there first wins.
  IF v_op.state IN ('succeeded', 'failed') AND v_op.fencing_token = p_token AND v_op.open_attempt_until IS NOT NULL THEN
    UPDATE operation o SET open_attempt_until = now() + make_interval(secs => t.lease_seconds), heartbeat_count = heartbeat_count + 1,
      last_heartbeat_at = now()
    FROM tool t
    WHERE o.id = p_op_id AND o.tenant_id = p_tenant_id AND o.fencing_token = p_token AND o.open_attempt_until IS NOT NULL
      AND t.tenant_id = o.tenant_id AND t.name = o.tool
    RETURNING o.open_attempt_until INTO v_lease;
    IF FOUND THEN
      UPDATE attempt SET lease_expires_at = v_lease
      WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token AND ended_at IS NULL;
      RETURN jsonb_build_object('code', 'ok', 'leaseExpiresAt', v_lease, 'op', tollgate_op_view(v_op)); -- [changed]
    END IF;
  END IF;
  RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
END $$;
