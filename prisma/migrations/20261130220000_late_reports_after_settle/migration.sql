-- Mends found by a black-box probe (2026-11-30 evening). Each function is re-declared whole; only
-- the marked parts differ from its previous migration.

-- ---------------------------------------------------------------------------------------------
-- tollgate_complete (from 20261130120000_failed_with_recorded_effects): an agent's complete that
-- agrees with a webhook's (or an operator's) earlier resolution was accepted and its result
-- dropped: the operation kept the webhook's empty result, so every replay answered "succeeded"
-- with statusCode, body and resourceId null, and the result reached neither the operation nor the
-- audit log. See the agrees branch. And a late report refused with lease-lost (its attempt was
-- taken over, or the operation became unknown) vanished without a trace, although it is the
-- evidence an operator needs: it is now kept in the audit log; nothing else changes.
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
  v_fill boolean;
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
    -- The report changes nothing, but what it says is evidence: a taken-over attempt that says
    -- it succeeded may have acted a second time (if the provider did not dedupe on the downstream
    -- key), and one whose outcome became unknown may say what happened. It goes to the audit log
    -- (and so the trace), once per distinct report.
    PERFORM 1 FROM audit_event WHERE tenant_id = p_tenant_id AND target_type = 'operation' AND target_id = p_op_id
      AND action = 'operation.late_report_refused' AND after ->> 'digest' = p_digest;
    IF NOT FOUND THEN
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.late_report_refused', v_op.id, jsonb_build_object('state', v_op.state),
        jsonb_build_object('reportingAttempt', v_att.number, 'newestAttempt', v_op.attempt_count, 'reportedOutcome', p_outcome,
          'result', p_result, 'error', p_error, 'provider', p_provider, 'digest', p_digest),
        CASE WHEN v_op.fencing_token <> p_token
          THEN format('attempt %s reported %s after attempt %s took over; refused (lease-lost)', v_att.number, p_outcome, v_op.attempt_count)
          ELSE format('attempt %s reported %s after its lease expired and the operation became %s; refused (lease-lost)', v_att.number, p_outcome, v_op.state) END);
    END IF;
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
  END IF;

  IF v_op.state IN ('succeeded', 'failed', 'rejected') THEN
    -- A webhook or an operator settled the operation while this attempt was running.
    IF p_outcome = 'unknown' OR p_outcome::text = v_op.state::text THEN
      UPDATE attempt SET ended_at = coalesce(ended_at, now()), complete_digest = p_digest, provider = p_provider, error = p_error,
        outcome = coalesce(outcome, CASE WHEN p_outcome = 'failed' AND p_retryable THEN 'retryable_failure' ELSE p_outcome END::attempt_outcome)
      WHERE id = v_att.id;
      -- The evidence settled the outcome but carried no result; the agent's agreeing report does.
      -- It is stored once, only while no replay has been served (replays count synchronously in
      -- the claim), so every replay ever served stays byte-for-byte the same. A resource id the
      -- resolution already named is kept.
      v_fill := p_outcome = 'succeeded' AND v_op.replay_count = 0 AND p_result IS NOT NULL
        AND coalesce(v_op.result -> 'statusCode', 'null'::jsonb) = 'null'::jsonb
        AND coalesce(v_op.result -> 'body', 'null'::jsonb) = 'null'::jsonb;
      IF v_fill THEN
        UPDATE operation SET updated_at = now(), result = jsonb_build_object('statusCode', p_result -> 'statusCode',
            'body', p_result -> 'body',
            'resourceId', coalesce(nullif(result -> 'resourceId', 'null'::jsonb), p_result -> 'resourceId'))
        WHERE id = v_op.id RETURNING * INTO v_op;
      END IF;
      -- Audited either way: the agent's result and provider ids are evidence for the trace.
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.complete_agreed', v_op.id,
        jsonb_build_object('state', v_op.state, 'attempt', v_att.number),
        jsonb_build_object('state', v_op.state, 'attempt', v_att.number, 'reportedOutcome', p_outcome, 'result', p_result,
          'error', p_error, 'provider', p_provider, 'resultStored', v_fill),
        CASE WHEN v_fill THEN 'the agent''s report agrees with the resolution; its result is stored'
          WHEN p_outcome = 'succeeded' THEN 'the agent''s report agrees with the resolution; the stored result is kept' END);
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


-- ---------------------------------------------------------------------------------------------
-- tollgate_record_side_effect (from 20261129223546_side_effects_outbox_worker): after a webhook
-- settled the operation, the attempt still holding the lease got 409 lease-lost ("a newer attempt
-- took over, or the lease ran out") for reporting what its provider call did, although neither had
-- happened and its complete was still accepted. It may now update its existing effects; a new
-- effect gets 409 already-resolved.
CREATE OR REPLACE FUNCTION tollgate_record_side_effect(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text,
  p_token bigint, p_name text, p_provider text, p_state text, p_request_id text, p_resource_id text,
  p_downstream_key text, p_new_id text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_old side_effect;
  v_new side_effect;
  v_state side_effect_state := p_state::side_effect_state;
  v_moves boolean;
  v_settled boolean := false;
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR SHARE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  IF v_op.fencing_token IS DISTINCT FROM p_token OR v_op.state NOT IN ('processing', 'succeeded', 'failed') THEN
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
  END IF;
  IF v_op.state <> 'processing' THEN
    -- A webhook (or an operator matching one) settled the operation while this attempt held a
    -- live lease, and left the attempt open for its complete. Until that complete, the attempt
    -- may still report what its provider calls did: those ids are evidence for reconciliation.
    -- An attempt that ended (completed, or lost its lease) may not.
    PERFORM 1 FROM attempt WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token AND outcome IS NULL;
    IF NOT FOUND THEN RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op)); END IF;
    v_settled := true;
  END IF;

  FOR i IN 1..2 LOOP
    SELECT * INTO v_old FROM side_effect WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND name = p_name FOR UPDATE;
    EXIT WHEN FOUND;
    -- A settled operation takes no new provider call.
    IF v_settled THEN
      RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_op),
        'detail', format('The operation was already resolved as %s while this attempt ran: do not start a new provider call. Report the outcome with complete.', v_op.state));
    END IF;
    -- A new provider call needs a live lease: after expiry another attempt may take over at any moment.
    IF v_op.lease_expires_at <= now() THEN
      RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op),
        'detail', 'The lease has expired: heartbeat before starting a new provider call.');
    END IF;
    INSERT INTO side_effect (id, tenant_id, operation_id, name, provider, downstream_key, state, provider_request_id,
      provider_resource_id, attempt_number)
    VALUES (p_new_id, p_tenant_id, p_op_id, p_name, p_provider, p_downstream_key, v_state, p_request_id, p_resource_id,
      v_op.attempt_count)
    ON CONFLICT (tenant_id, operation_id, name) DO NOTHING
    RETURNING * INTO v_new;
    IF FOUND THEN
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'side_effect.' || v_state, p_op_id, NULL,
        jsonb_build_object('sideEffect', p_name, 'state', v_state, 'provider', p_provider, 'attempt', v_op.attempt_count,
          'providerRequestId', p_request_id, 'providerResourceId', p_resource_id), NULL);
      RETURN jsonb_build_object('code', 'created', 'effect', tollgate_side_effect_view(v_new));
    END IF;
  END LOOP;
  IF v_old.id IS NULL THEN RAISE EXCEPTION 'side effect could not settle on a row'; END IF;

  IF v_old.provider <> p_provider
    OR (p_request_id IS NOT NULL AND v_old.provider_request_id IS NOT NULL AND v_old.provider_request_id <> p_request_id)
    OR (p_resource_id IS NOT NULL AND v_old.provider_resource_id IS NOT NULL AND v_old.provider_resource_id <> p_resource_id) THEN
    RETURN jsonb_build_object('code', 'side-effect-mismatch', 'effect', tollgate_side_effect_view(v_old));
  END IF;
  -- Announcing `intended` again (a new attempt after a takeover) or repeating the current state
  -- never moves it; anything else must move forward.
  v_moves := v_state <> 'intended' AND v_state <> v_old.state;
  IF v_moves AND tollgate_side_effect_rank(v_state) <= tollgate_side_effect_rank(v_old.state) THEN
    RETURN jsonb_build_object('code', 'side-effect-backwards', 'effect', tollgate_side_effect_view(v_old));
  END IF;
  IF NOT v_moves AND (p_request_id IS NULL OR v_old.provider_request_id IS NOT NULL)
    AND (p_resource_id IS NULL OR v_old.provider_resource_id IS NOT NULL) THEN
    RETURN jsonb_build_object('code', 'unchanged', 'effect', tollgate_side_effect_view(v_old));
  END IF;
  UPDATE side_effect SET state = CASE WHEN v_moves THEN v_state ELSE state END,
    provider_request_id = coalesce(provider_request_id, p_request_id),
    provider_resource_id = coalesce(provider_resource_id, p_resource_id),
    attempt_number = v_op.attempt_count, updated_at = now()
  WHERE id = v_old.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, 'side_effect.' || v_new.state, p_op_id,
    jsonb_build_object('sideEffect', p_name, 'state', v_old.state, 'attempt', v_old.attempt_number),
    jsonb_build_object('sideEffect', p_name, 'state', v_new.state, 'provider', v_new.provider, 'attempt', v_op.attempt_count,
      'providerRequestId', v_new.provider_request_id, 'providerResourceId', v_new.provider_resource_id), NULL);
  RETURN jsonb_build_object('code', 'updated', 'effect', tollgate_side_effect_view(v_new));
END $$;

-- ---------------------------------------------------------------------------------------------
-- tollgate_decide_approval (from 20261129222947_approval_decisions): only the decision that
-- itself expired an approval got approval-expired; one on an approval the per-minute sweep (or a
-- claim, or an earlier decision) had expired got approval-already-decided.
CREATE OR REPLACE FUNCTION tollgate_decide_approval(p_tenant_id text, p_approval_id text, p_decision text, p_reason text,
  p_actor text, p_allowed_tools text[]) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_approval approval;
  v_retention int;
BEGIN
  SELECT o.* INTO v_op FROM operation o JOIN approval a ON a.operation_id = o.id
  WHERE a.id = p_approval_id AND a.tenant_id = p_tenant_id AND o.tenant_id = p_tenant_id
  FOR UPDATE OF o;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'approval-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT (v_op.tool = ANY (p_allowed_tools)) THEN
    RETURN jsonb_build_object('code', 'forbidden');
  END IF;
  SELECT * INTO v_approval FROM approval WHERE id = p_approval_id FOR UPDATE;
  IF v_approval.state = 'expired' THEN
    -- Expired by the sweep, a claim or an earlier decision: the same answer as the first one got.
    RETURN jsonb_build_object('code', 'approval-expired', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  IF v_approval.state <> 'pending' THEN
    RETURN jsonb_build_object('code', 'approval-already-decided', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  IF v_approval.expires_at <= now() THEN
    v_op := tollgate_expire_approval(v_op, v_approval);
    SELECT * INTO v_approval FROM approval WHERE id = p_approval_id;
    RETURN jsonb_build_object('code', 'approval-expired', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  IF v_op.state <> 'awaiting_approval' OR v_op.fingerprint <> v_approval.fingerprint THEN
    -- Cannot happen through Tollgate's own writes; refuse rather than approve something else.
    RETURN jsonb_build_object('code', 'approval-already-decided', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;

  UPDATE approval SET state = CASE WHEN p_decision = 'approve' THEN 'approved' ELSE 'rejected' END::approval_state,
    decided_by = p_actor, decided_at = now(), reason = p_reason
  WHERE id = p_approval_id RETURNING * INTO v_approval;
  IF p_decision = 'approve' THEN
    UPDATE operation SET state = 'pending', not_before = NULL, updated_at = now() WHERE id = v_op.id RETURNING * INTO v_op;
  ELSE
    SELECT result_retention_hours INTO v_retention FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
    UPDATE operation SET state = 'rejected', completed_at = now(), updated_at = now(),
      error = jsonb_build_object('code', 'approval-rejected', 'message', p_reason),
      result_expires_at = now() + make_interval(hours => coalesce(v_retention, 24))
    WHERE id = v_op.id RETURNING * INTO v_op;
  END IF;
  PERFORM tollgate_audit(p_tenant_id, p_actor, CASE WHEN p_decision = 'approve' THEN 'approval.approved' ELSE 'approval.rejected' END,
    v_op.id, jsonb_build_object('state', 'awaiting_approval', 'approvalId', v_approval.id),
    jsonb_build_object('state', v_op.state, 'approvalId', v_approval.id), p_reason);
  RETURN jsonb_build_object('code', 'decided', 'approval', tollgate_approval_view(v_approval, v_op));
END $$;
