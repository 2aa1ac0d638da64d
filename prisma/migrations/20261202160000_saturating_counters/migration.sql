-- From a review of "never a 500" (2026-12-02): the operation's counters of replays, conflicting
-- claims and heartbeats are int4 and grew without a ceiling. An agent stuck in a loop on one key
-- (polling an unknown operation, replaying a result kept for 90 days) at a thousand calls a second
-- reaches 2^31 in 25 days; from then on every claim under that key failed with 22003, a 500, and
-- the stored result could no longer be replayed. The counters now stop at int4's largest value:
-- they are for the trace, and "over two billion" says what the exact figure would.
--
-- tollgate_count_conflict (from 20261130060000_helpers_with_cached_plans), tollgate_claim (from
-- 20261201011000_durable_replays_while_fillable), tollgate_heartbeat (from
-- 20261202063000_operation_view_key_digest) and tollgate_lease_expired_to_unknown (from
-- 20261129200100_invariants_and_protocol) are re-declared whole; only the parts marked [changed]
-- differ. Earlier [changed] marks are taken out.

-- A counter one higher, or unchanged at int4's largest value. Inlinable (one SELECT, IMMUTABLE).
CREATE OR REPLACE FUNCTION tollgate_count_up(n integer) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN n >= 2147483647 THEN n ELSE n + 1 END
$$;

CREATE OR REPLACE FUNCTION tollgate_count_conflict(p_op_id text, p_mismatch boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- [changed] tollgate_count_up, was + 1
  UPDATE operation SET conflict_count = tollgate_count_up(conflict_count),
    mismatch_count = CASE WHEN p_mismatch THEN tollgate_count_up(mismatch_count) ELSE mismatch_count END,
    last_conflict_at = now()
  WHERE id = p_op_id;
END $$;

CREATE OR REPLACE FUNCTION tollgate_claim(p_tenant_id text, p_api_key_id text, p_principal text, p_tool text, p_key_digest text,
  p_fingerprint text, p_args jsonb, p_workflow_id text, p_trace_id text, p_new_id text, p_downstream_key text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_tool tool;
  v_op operation;
  v_approval approval;
  v_needs_approval boolean;
  v_token bigint;
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = p_tool;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'tool-not-found'); END IF;
  v_needs_approval := v_tool.approval = 'required';

  FOR i IN 1..3 LOOP
    -- Insert-or-find: the unique index on the idempotency scope decides who creates the row.
    v_token := CASE WHEN v_needs_approval THEN NULL ELSE nextval('fencing_token_seq') END;
    INSERT INTO operation (id, tenant_id, principal, tool, key_digest, fingerprint, args, state, max_attempts, attempt_count,
      fencing_token, lease_expires_at, downstream_key, workflow_id, trace_id)
    VALUES (p_new_id, p_tenant_id, p_principal, p_tool, p_key_digest, p_fingerprint, p_args,
      CASE WHEN v_needs_approval THEN 'awaiting_approval' ELSE 'processing' END::operation_state, v_tool.max_attempts,
      CASE WHEN v_needs_approval THEN 0 ELSE 1 END, v_token,
      CASE WHEN v_needs_approval THEN NULL ELSE now() + make_interval(secs => v_tool.lease_seconds) END,
      p_downstream_key, p_workflow_id, p_trace_id)
    ON CONFLICT (tenant_id, principal, tool, key_digest) DO NOTHING
    RETURNING * INTO v_op;

    IF FOUND THEN
      IF v_needs_approval THEN
        INSERT INTO approval (id, tenant_id, operation_id, fingerprint, requested_by, expires_at)
        VALUES ('apr_' || replace(gen_random_uuid()::text, '-', ''), p_tenant_id, v_op.id, p_fingerprint, p_principal,
          now() + make_interval(secs => v_tool.approval_ttl_seconds))
        RETURNING * INTO v_approval;
        PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.claimed', v_op.id, NULL,
          jsonb_build_object('state', v_op.state, 'approvalId', v_approval.id), NULL);
        RETURN jsonb_build_object('code', 'awaiting-approval', 'op', tollgate_op_view(v_op),
          'approval', jsonb_build_object('id', v_approval.id, 'expiresAt', v_approval.expires_at));
      END IF;
      INSERT INTO attempt (id, tenant_id, operation_id, number, fencing_token, principal, api_key_id, lease_expires_at, workflow_id, trace_id)
      VALUES (tollgate_new_attempt_id(), p_tenant_id, v_op.id, 1, v_token, p_principal, p_api_key_id,
        v_op.lease_expires_at, p_workflow_id, p_trace_id);
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.claimed', v_op.id, NULL,
        jsonb_build_object('state', v_op.state, 'attempt', 1, 'fencingToken', v_token::text), NULL);
      RETURN tollgate_attempt_granted('created', v_op);
    END IF;

    SELECT * INTO v_op FROM operation
    WHERE tenant_id = p_tenant_id AND principal = p_principal AND tool = p_tool AND key_digest = p_key_digest
    FOR UPDATE;
    -- Pruned between our insert and our lock: go round and insert again.
    IF FOUND THEN EXIT; END IF;
  END LOOP;
  IF v_op.id IS NULL THEN RAISE EXCEPTION 'claim could not settle on an operation row'; END IF;

  IF v_op.fingerprint <> p_fingerprint THEN
    PERFORM tollgate_count_conflict(v_op.id, true);
    RETURN jsonb_build_object('code', 'idempotency-key-reused', 'op', tollgate_op_view(v_op), 'storedArgs', v_op.args);
  END IF;

  CASE v_op.state
  WHEN 'succeeded', 'failed' THEN
    -- A replay only bumps a counter: losing that increment in a crash is harmless, so skip the fsync
    -- wait. Not while an attempt a settle left open may still report: its agreeing
    -- complete stores its result only if no replay was served (replay_count = 0), so that count
    -- must survive a crash, or a later replay could differ from one already served.
    IF v_op.open_attempt_until IS NULL THEN
      SET LOCAL synchronous_commit = off;
    END IF;
    UPDATE operation SET replay_count = tollgate_count_up(replay_count), last_replay_at = now() WHERE id = v_op.id; -- [changed]
    RETURN jsonb_build_object('code', 'replay', 'op', tollgate_op_view(v_op));
  WHEN 'rejected' THEN
    RETURN jsonb_build_object('code', 'approval-rejected', 'op', tollgate_op_view(v_op));
  WHEN 'awaiting_approval' THEN
    SELECT * INTO v_approval FROM approval WHERE tenant_id = p_tenant_id AND operation_id = v_op.id;
    IF v_approval.expires_at <= now() AND v_approval.state = 'pending' THEN
      v_op := tollgate_expire_approval(v_op, v_approval);
      RETURN jsonb_build_object('code', 'approval-rejected', 'op', tollgate_op_view(v_op));
    END IF;
    RETURN jsonb_build_object('code', 'awaiting-approval', 'op', tollgate_op_view(v_op),
      'approval', jsonb_build_object('id', v_approval.id, 'expiresAt', v_approval.expires_at));
  WHEN 'unknown' THEN
    PERFORM tollgate_count_conflict(v_op.id, false);
    RETURN jsonb_build_object('code', 'outcome-unknown', 'op', tollgate_op_view(v_op));
  WHEN 'pending' THEN
    IF v_op.not_before IS NOT NULL AND v_op.not_before > now() THEN
      PERFORM tollgate_count_conflict(v_op.id, false);
      RETURN jsonb_build_object('code', 'retry-backoff', 'op', tollgate_op_view(v_op),
        'retryAfterMs', ceil(extract(epoch FROM v_op.not_before - now()) * 1000));
    END IF;
    -- An approved operation's first attempt: authorization again. The key was checked above
    -- (not revoked) and by the caller (allowed this tool); the approval must be 'approved' and
    -- bound to exactly these args. An operation created without approval has no row here.
    SELECT * INTO v_approval FROM approval WHERE tenant_id = p_tenant_id AND operation_id = v_op.id;
    IF FOUND AND (v_approval.state <> 'approved' OR v_approval.fingerprint <> p_fingerprint) THEN
      RETURN jsonb_build_object('code', 'approval-mismatch', 'op', tollgate_op_view(v_op));
    END IF;
    v_op := tollgate_start_attempt(v_op, v_tool.lease_seconds, p_principal, p_api_key_id, p_workflow_id, p_trace_id);
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.attempt_started', v_op.id, jsonb_build_object('state', 'pending'),
      jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count, 'fencingToken', v_op.fencing_token::text), NULL);
    RETURN tollgate_attempt_granted('attempt', v_op);
  ELSE -- processing
    IF v_op.lease_expires_at > now() THEN
      PERFORM tollgate_count_conflict(v_op.id, false);
      RETURN jsonb_build_object('code', 'operation-in-progress', 'op', tollgate_op_view(v_op),
        'retryAfterMs', ceil(extract(epoch FROM v_op.lease_expires_at - now()) * 1000));
    END IF;
    IF v_tool.takeover = 'deduplicated' AND v_op.attempt_count < v_op.max_attempts THEN
      UPDATE attempt SET outcome = 'taken_over', ended_at = now()
      WHERE tenant_id = p_tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token;
      UPDATE operation SET takeover_count = takeover_count + 1 WHERE id = v_op.id;
      v_op := tollgate_start_attempt(v_op, v_tool.lease_seconds, p_principal, p_api_key_id, p_workflow_id, p_trace_id);
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.taken_over', v_op.id,
        jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count - 1),
        jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count, 'fencingToken', v_op.fencing_token::text),
        'lease expired; takeover policy is deduplicated');
      RETURN tollgate_attempt_granted('takeover', v_op);
    END IF;
    -- Nobody can tell whether the expired attempt's effect happened: the outcome is unknown.
    v_op := tollgate_lease_expired_to_unknown(v_op, p_actor);
    RETURN jsonb_build_object('code', 'outcome-unknown', 'op', tollgate_op_view(v_op), 'becameUnknown', true);
  END CASE;
END $$;

CREATE OR REPLACE FUNCTION tollgate_heartbeat(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text, p_token bigint)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_lease timestamptz;
  v_log jsonb;
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  UPDATE operation o SET lease_expires_at = now() + make_interval(secs => t.lease_seconds), heartbeat_count = tollgate_count_up(heartbeat_count), -- [changed]
    last_heartbeat_at = now()
  FROM tool t
  WHERE o.id = p_op_id AND o.tenant_id = p_tenant_id AND o.state = 'processing' AND o.fencing_token = p_token
    AND t.tenant_id = o.tenant_id AND t.name = o.tool AND (cardinality(p_allowed_tools) = 0 OR o.tool = ANY (p_allowed_tools))
  RETURNING o.lease_expires_at, -- the log fields beside the lease
    jsonb_build_object('tool', o.tool, 'attempt', o.attempt_count, 'workflowId', o.workflow_id, 'keyDigest', left(o.key_digest, 16))
  INTO v_lease, v_log;
  IF FOUND THEN
    UPDATE attempt SET lease_expires_at = v_lease WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token;
    RETURN jsonb_build_object('code', 'ok', 'leaseExpiresAt', v_lease, 'log', v_log);
  END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  -- The attempt a settle left open (a webhook or an inbox match got there first) keeps
  -- its lease while it works, as before the settle: otherwise the reaper ended a long call at its
  -- first lease and the agent's agreeing result was never stored. Conditions re-checked under the
  -- row's lock, so a reaper that got there first wins.
  IF v_op.state IN ('succeeded', 'failed') AND v_op.fencing_token = p_token AND v_op.open_attempt_until IS NOT NULL THEN
    UPDATE operation o SET open_attempt_until = now() + make_interval(secs => t.lease_seconds), heartbeat_count = tollgate_count_up(heartbeat_count), -- [changed]
      last_heartbeat_at = now()
    FROM tool t
    WHERE o.id = p_op_id AND o.tenant_id = p_tenant_id AND o.fencing_token = p_token AND o.open_attempt_until IS NOT NULL
      AND t.tenant_id = o.tenant_id AND t.name = o.tool
    RETURNING o.open_attempt_until INTO v_lease;
    IF FOUND THEN
      UPDATE attempt SET lease_expires_at = v_lease
      WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token AND ended_at IS NULL;
      RETURN jsonb_build_object('code', 'ok', 'leaseExpiresAt', v_lease, 'op', tollgate_op_view(v_op));
    END IF;
  END IF;
  RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
END $$;

CREATE OR REPLACE FUNCTION tollgate_lease_expired_to_unknown(v_op operation, p_actor text) RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_new operation;
BEGIN
  UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE tenant_id = v_op.tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  UPDATE operation SET state = 'unknown', lease_expires_at = NULL, updated_at = now(), conflict_count = tollgate_count_up(conflict_count), -- [changed]
    last_conflict_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(v_op.tenant_id, p_actor, 'operation.unknown', v_op.id,
    jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count),
    jsonb_build_object('state', 'unknown'), 'lease expired; the attempt may or may not have had its effect');
  RETURN v_new;
END $$;
