-- Invariants Prisma's schema language cannot express, and the operation protocol's
-- hot path as SQL functions: each claim, heartbeat and complete is ONE round trip that
-- locks the operation row, decides, and writes the operation, its attempt and its audit
-- event together. There is never a check-then-insert in application code.

-- Policy ranges (the API validates them too; these hold whoever writes).
ALTER TABLE "tool"
  ADD CONSTRAINT tool_lease_seconds_range CHECK (lease_seconds BETWEEN 1 AND 3600),
  ADD CONSTRAINT tool_max_attempts_range CHECK (max_attempts BETWEEN 1 AND 20),
  ADD CONSTRAINT tool_backoff_range CHECK (backoff_base_ms BETWEEN 1 AND 3600000 AND backoff_cap_ms BETWEEN backoff_base_ms AND 86400000),
  ADD CONSTRAINT tool_approval_ttl_range CHECK (approval_ttl_seconds BETWEEN 60 AND 2592000),
  ADD CONSTRAINT tool_result_retention_range CHECK (result_retention_hours BETWEEN 1 AND 2160),
  ADD CONSTRAINT tool_name_format CHECK (name ~ '^[a-z][a-z0-9_.-]{0,99}$');

ALTER TABLE "operation"
  ADD CONSTRAINT operation_attempts_range CHECK (attempt_count >= 0 AND max_attempts BETWEEN 1 AND 1000),
  ADD CONSTRAINT operation_processing_has_lease CHECK (state <> 'processing' OR (lease_expires_at IS NOT NULL AND fencing_token IS NOT NULL)),
  ADD CONSTRAINT operation_terminal_has_expiry CHECK (state NOT IN ('succeeded', 'failed', 'rejected') OR result_expires_at IS NOT NULL),
  ADD CONSTRAINT operation_fingerprint_versioned CHECK (fingerprint ~ '^v[0-9]+:');

-- The audit log is append-only.
CREATE FUNCTION tollgate_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_event is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON "audit_event"
  FOR EACH ROW EXECUTE FUNCTION tollgate_audit_append_only();

-- Fencing tokens come from one sequence: strictly increasing across every attempt of every operation.
CREATE SEQUENCE fencing_token_seq AS bigint START 1;

-- The status view an API client sees (never the fencing token, never the key digest).
CREATE FUNCTION tollgate_op_view(o operation) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'operationId', o.id, 'tool', o.tool, 'state', o.state, 'attempts', o.attempt_count,
    'leaseExpiresAt', o.lease_expires_at, 'notBefore', o.not_before, 'downstreamKey', o.downstream_key,
    'result', o.result, 'error', o.error, 'resultExpiresAt', o.result_expires_at,
    'createdAt', o.created_at, 'updatedAt', o.updated_at, 'resolution', o.resolution,
    'workflowId', o.workflow_id, 'principal', o.principal)
$$;

CREATE FUNCTION tollgate_audit(p_tenant_id text, p_actor text, p_action text, p_op_id text, p_before jsonb, p_after jsonb, p_reason text)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (p_tenant_id, p_actor, p_action, 'operation', p_op_id, p_before, p_after, p_reason)
$$;

-- Starts attempt number attempt_count+1 on a locked operation: new fencing token (taken now,
-- under the row lock, so a later attempt can never get a smaller one), fresh lease.
CREATE FUNCTION tollgate_start_attempt(v_op operation, p_lease_seconds int, p_principal text, p_api_key_id text,
  p_workflow_id text, p_trace_id text) RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_token bigint := nextval('fencing_token_seq');
  v_new operation;
BEGIN
  UPDATE operation SET state = 'processing', attempt_count = attempt_count + 1, fencing_token = v_token,
    lease_expires_at = now() + make_interval(secs => p_lease_seconds), not_before = NULL, updated_at = now()
  WHERE id = v_op.id RETURNING * INTO v_new;
  INSERT INTO attempt (id, tenant_id, operation_id, number, fencing_token, principal, api_key_id, lease_expires_at, workflow_id, trace_id)
  VALUES ('att_' || replace(gen_random_uuid()::text, '-', ''), v_new.tenant_id, v_new.id, v_new.attempt_count, v_token,
    p_principal, p_api_key_id, v_new.lease_expires_at, p_workflow_id, p_trace_id);
  RETURN v_new;
END $$;

-- POST /api/v1/operations. Returns { code, op, ... } where code is "created", "attempt",
-- "takeover", "awaiting-approval", "replay" or a problem code.
CREATE FUNCTION tollgate_claim(p_tenant_id text, p_api_key_id text, p_principal text, p_tool text, p_key_digest text,
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
      VALUES ('att_' || replace(gen_random_uuid()::text, '-', ''), p_tenant_id, v_op.id, 1, v_token, p_principal, p_api_key_id,
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
    -- A replay only bumps a counter: losing that increment in a crash is harmless, so skip the fsync wait.
    SET LOCAL synchronous_commit = off;
    UPDATE operation SET replay_count = replay_count + 1, last_replay_at = now() WHERE id = v_op.id;
    RETURN jsonb_build_object('code', 'replay', 'op', tollgate_op_view(v_op));
  WHEN 'rejected' THEN
    RETURN jsonb_build_object('code', 'approval-rejected', 'op', tollgate_op_view(v_op));
  WHEN 'awaiting_approval' THEN
    SELECT * INTO v_approval FROM approval WHERE tenant_id = p_tenant_id AND operation_id = v_op.id;
    IF v_approval.expires_at <= now() AND v_approval.state = 'pending' THEN
      UPDATE approval SET state = 'expired', decided_at = now(), decided_by = 'system:expiry', reason = 'expired' WHERE id = v_approval.id;
      UPDATE operation SET state = 'rejected', completed_at = now(), updated_at = now(),
        error = jsonb_build_object('code', 'approval-expired', 'message', 'The approval request expired'),
        result_expires_at = now() + make_interval(hours => v_tool.result_retention_hours)
      WHERE id = v_op.id RETURNING * INTO v_op;
      PERFORM tollgate_audit(p_tenant_id, 'system:approval-expiry', 'approval.expired', v_op.id,
        jsonb_build_object('state', 'awaiting_approval'), jsonb_build_object('state', 'rejected'), 'expired');
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

CREATE FUNCTION tollgate_count_conflict(p_op_id text, p_mismatch boolean) RETURNS void LANGUAGE sql AS $$
  UPDATE operation SET conflict_count = conflict_count + 1, mismatch_count = mismatch_count + (CASE WHEN p_mismatch THEN 1 ELSE 0 END),
    last_conflict_at = now()
  WHERE id = p_op_id
$$;

CREATE FUNCTION tollgate_attempt_granted(p_code text, v_op operation) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('code', p_code, 'op', tollgate_op_view(v_op),
    'attempt', jsonb_build_object('number', v_op.attempt_count, 'fencingToken', v_op.fencing_token::text,
      'leaseExpiresAt', v_op.lease_expires_at))
$$;

-- An expired lease whose attempt may not be taken over: the attempt lost its lease and the
-- operation's outcome becomes unknown, for evidence or an operator to settle.
CREATE FUNCTION tollgate_lease_expired_to_unknown(v_op operation, p_actor text) RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_new operation;
BEGIN
  UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE tenant_id = v_op.tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  UPDATE operation SET state = 'unknown', lease_expires_at = NULL, updated_at = now(), conflict_count = conflict_count + 1,
    last_conflict_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(v_op.tenant_id, p_actor, 'operation.unknown', v_op.id,
    jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count),
    jsonb_build_object('state', 'unknown'), 'lease expired; the attempt may or may not have had its effect');
  RETURN v_new;
END $$;

-- POST /api/v1/operations/{id}/heartbeat: extend the lease of the current attempt.
CREATE FUNCTION tollgate_heartbeat(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text, p_token bigint)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_lease timestamptz;
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  UPDATE operation o SET lease_expires_at = now() + make_interval(secs => t.lease_seconds), heartbeat_count = heartbeat_count + 1,
    last_heartbeat_at = now()
  FROM tool t
  WHERE o.id = p_op_id AND o.tenant_id = p_tenant_id AND o.state = 'processing' AND o.fencing_token = p_token
    AND t.tenant_id = o.tenant_id AND t.name = o.tool AND (cardinality(p_allowed_tools) = 0 OR o.tool = ANY (p_allowed_tools))
  RETURNING o.lease_expires_at INTO v_lease;
  IF FOUND THEN
    UPDATE attempt SET lease_expires_at = v_lease WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token;
    RETURN jsonb_build_object('code', 'ok', 'leaseExpiresAt', v_lease);
  END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
END $$;

-- POST /api/v1/operations/{id}/complete. p_digest identifies the exact complete request, so
-- the same complete repeated answers 200 without changing anything.
CREATE FUNCTION tollgate_complete(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text, p_token bigint,
  p_outcome text, p_retryable boolean, p_result jsonb, p_error jsonb, p_provider jsonb, p_digest text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_att attempt;
  v_tool tool;
  v_new operation;
  v_state operation_state;
  v_att_outcome attempt_outcome;
  v_delay_ms double precision;
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  SELECT * INTO v_att FROM attempt WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op)); END IF;

  IF v_att.complete_digest IS NOT NULL THEN
    IF v_att.complete_digest = p_digest THEN RETURN jsonb_build_object('code', 'repeated', 'op', tollgate_op_view(v_op)); END IF;
    RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_op),
      'detail', 'This attempt already reported a different outcome');
  END IF;
  IF v_op.fencing_token <> p_token OR v_op.state IN ('pending', 'unknown', 'awaiting_approval') THEN
    -- A newer attempt holds the operation, or the lease ran out and the outcome became unknown.
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
  END IF;

  IF v_op.state IN ('succeeded', 'failed', 'rejected') THEN
    -- A webhook or an operator settled the operation while this attempt was running.
    IF p_outcome = 'unknown' OR p_outcome::text = v_op.state::text THEN
      UPDATE attempt SET ended_at = coalesce(ended_at, now()), complete_digest = p_digest, provider = p_provider, error = p_error,
        outcome = coalesce(outcome, CASE WHEN p_outcome = 'failed' AND p_retryable THEN 'retryable_failure' ELSE p_outcome END::attempt_outcome)
      WHERE id = v_att.id;
      RETURN jsonb_build_object('code', 'agrees', 'op', tollgate_op_view(v_op));
    END IF;
    UPDATE operation SET flagged_at = now(), flag_reason = format('attempt %s reported %s after the operation was resolved %s',
      v_att.number, p_outcome, v_op.state), updated_at = now() WHERE id = v_op.id RETURNING * INTO v_new;
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.complete_conflict', v_op.id, jsonb_build_object('state', v_op.state),
      jsonb_build_object('reportedOutcome', p_outcome, 'attempt', v_att.number, 'result', p_result, 'error', p_error),
      'the agent reported an outcome that contradicts the resolution');
    RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_new),
      'detail', format('The operation was already resolved as %s', v_op.state));
  END IF;

  -- processing, and this attempt holds the newest token: apply the report. A late report after
  -- the lease expired is still accepted when nobody took over, because it is the truth.
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
  IF p_outcome = 'succeeded' THEN
    v_state := 'succeeded'; v_att_outcome := 'succeeded';
  ELSIF p_outcome = 'unknown' THEN
    v_state := 'unknown'; v_att_outcome := 'unknown';
  ELSIF p_retryable AND v_op.attempt_count < v_op.max_attempts THEN
    v_state := 'pending'; v_att_outcome := 'retryable_failure';
    -- Full jitter: uniform in [0, min(cap, base * 2^(n-1))).
    v_delay_ms := random() * least(v_tool.backoff_cap_ms::double precision,
      v_tool.backoff_base_ms * power(2::double precision, v_op.attempt_count - 1));
  ELSE
    v_state := 'failed'; v_att_outcome := CASE WHEN p_retryable THEN 'retryable_failure' ELSE 'failed' END;
  END IF;

  UPDATE attempt SET outcome = v_att_outcome, ended_at = now(), error = p_error, provider = p_provider, complete_digest = p_digest
  WHERE id = v_att.id;
  UPDATE operation SET state = v_state, updated_at = now(), lease_expires_at = NULL,
    result = CASE WHEN v_state = 'pending' THEN result ELSE p_result END,
    error = p_error,
    not_before = CASE WHEN v_state = 'pending' THEN now() + make_interval(secs => v_delay_ms / 1000.0) END,
    completed_at = CASE WHEN v_state IN ('succeeded', 'failed') THEN now() END,
    result_expires_at = CASE WHEN v_state IN ('succeeded', 'failed') THEN now() + make_interval(hours => v_tool.result_retention_hours) END
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, CASE v_state WHEN 'pending' THEN 'operation.retry_scheduled'
      WHEN 'unknown' THEN 'operation.unknown' ELSE 'operation.completed' END, v_op.id,
    jsonb_build_object('state', 'processing', 'attempt', v_att.number),
    jsonb_build_object('state', v_state, 'attempt', v_att.number, 'outcome', p_outcome, 'retryable', p_retryable, 'notBefore', v_new.not_before),
    CASE WHEN v_state = 'unknown' THEN 'the agent reported an unknown outcome' END);
  RETURN jsonb_build_object('code', 'completed', 'op', tollgate_op_view(v_new), 'state', v_state);
END $$;

-- POST /api/v1/operations/{id}/resolve and the console: an operator (or, later, a webhook or a
-- probe) settles an unknown outcome, or a processing one whose lease has expired.
CREATE FUNCTION tollgate_resolve(p_tenant_id text, p_op_id text, p_outcome text, p_reason text, p_resource_id text,
  p_evidence text, p_actor text, p_via text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_tool tool;
  v_new operation;
  v_resolution jsonb;
BEGIN
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF NOT (v_op.state = 'unknown' OR (v_op.state = 'processing' AND v_op.lease_expires_at <= now())) THEN
    RETURN jsonb_build_object('code', 'invalid-state', 'op', tollgate_op_view(v_op));
  END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
  v_resolution := jsonb_build_object('outcome', p_outcome, 'by', p_actor, 'via', p_via, 'reason', p_reason,
    'resourceId', p_resource_id, 'evidence', p_evidence, 'at', now(), 'fromState', v_op.state);
  UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  UPDATE operation SET updated_at = now(), lease_expires_at = NULL, resolution = v_resolution,
    state = CASE p_outcome WHEN 'retry' THEN 'pending' ELSE p_outcome END::operation_state,
    result = CASE WHEN p_outcome = 'succeeded'
      THEN jsonb_build_object('statusCode', result -> 'statusCode', 'body', result -> 'body',
        'resourceId', coalesce(to_jsonb(p_resource_id), result -> 'resourceId'))
      ELSE result END,
    error = CASE p_outcome WHEN 'succeeded' THEN NULL
      WHEN 'failed' THEN jsonb_build_object('code', 'resolved-failed', 'message', p_reason) ELSE error END,
    not_before = CASE WHEN p_outcome = 'retry' THEN now() END,
    max_attempts = CASE WHEN p_outcome = 'retry' THEN greatest(max_attempts, attempt_count + 1) ELSE max_attempts END,
    completed_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() END,
    result_expires_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() + make_interval(hours => v_tool.result_retention_hours) END
  WHERE id = p_op_id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.resolved', p_op_id,
    jsonb_build_object('state', v_op.state), jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', p_via,
      'resourceId', p_resource_id, 'evidence', p_evidence), p_reason);
  RETURN jsonb_build_object('code', 'resolved', 'op', tollgate_op_view(v_new));
END $$;
