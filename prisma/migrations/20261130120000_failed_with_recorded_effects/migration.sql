-- A complete that would make an operation terminally `failed` ("definitely no effect") while one of
-- its side effects is recorded as sent, unknown or confirmed makes it `unknown` instead: the
-- provider was called, so the effect may have happened. The rest of the function is unchanged
-- (20261129200100_invariants_and_protocol).
CREATE OR REPLACE FUNCTION tollgate_complete(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text, p_token bigint,
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
  v_effects text;
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
    -- `failed` is final and means "definitely no effect". A side effect this operation recorded as
    -- sent, unknown or confirmed says the provider was called and may have acted (or did): the
    -- operation's outcome is then unknown, for evidence or an operator to settle, never a failure
    -- that replays tell every retry. (A retryable failure with attempts left still goes back to
    -- pending: the next attempt reuses each effect's downstream key and sees how far this one got.)
    SELECT string_agg(format('%s: %s', name, state), ', ' ORDER BY name) INTO v_effects
    FROM side_effect WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND state IN ('sent', 'unknown', 'confirmed');
    IF v_effects IS NOT NULL THEN
      v_state := 'unknown';
    END IF;
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
    CASE WHEN v_state = 'unknown' AND v_effects IS NOT NULL
      THEN format('the agent reported failed, but side effects may have happened (%s)', v_effects)
      WHEN v_state = 'unknown' THEN 'the agent reported an unknown outcome' END);
  RETURN jsonb_build_object('code', 'completed', 'op', tollgate_op_view(v_new), 'state', v_state);
END $$;
