-- A side-effect report refused as lease-lost was lost (noted as left in the 2026-12-02 notes): an
-- attempt whose lease ran out, and whose operation became unknown, then said its charge was
-- confirmed at the provider, with the provider's ids. That is exactly the evidence an operator
-- settling the unknown operation needs, and a late complete's is kept; this one got 409 and left
-- no trace. Now a refused report from an attempt of the operation (a token it issued) is kept in
-- the audit log, once per distinct report, and shown on the trace. An `intended` report is not
-- kept: it says a call was about to start, and the 409 stops it.
--
-- Some act, as a late complete's do (review, 2026-12-02: the retry charged a second time), when
-- the report tells more than the effect's row already says (this attempt's own report, recorded
-- under its lease and repeated, tells nothing new; another attempt's does not speak for it):
-- - while the operation waits to retry, before any retry started: the attempt that reported
--   failed (retryable), or that an operator sent back to retry, says its effect was sent,
--   confirmed or is unknown, or any earlier attempt says its effect was confirmed: the effect
--   happened or may have, so the operation becomes unknown and the retry does not run;
-- - on a failed operation, any attempt says its effect was sent, confirmed or is unknown: every
--   replay says nothing happened, so the operation is flagged for an operator;
-- - a superseded attempt (a newer one started) says its effect was confirmed: flagged, unless the
--   provider dedupes the newer attempt's call (takeover deduplicated, the same effect key) and the
--   attempt had said nothing else before.
-- None changes the effect's row: the report's ids are on the trace. The late audit row says
-- what the report did (`acted`).
--
-- tollgate_record_side_effect (from 20261201150000_side_effect_reports_behind_final) re-declared
-- whole with the same signature; only the parts marked [changed] differ from it. It now locks the
-- operation FOR NO KEY UPDATE, not FOR SHARE: a late report may update it, and two reports holding
-- a share lock and both upgrading it deadlock (and two identical ones both passed the dedupe).

CREATE FUNCTION tollgate_side_effect_late_report(p_op operation, p_token bigint, p_name text, p_provider text,
  p_state side_effect_state, p_request_id text, p_resource_id text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_att attempt;
  v_row side_effect;
  v_kept boolean;
  v_news boolean;
  v_digest text;
  v_why text;
  v_by_operator boolean;
  v_takeover takeover_policy;
  v_new operation;
  v_acted text;
  v_detail text;
  v_state_before operation_state := p_op.state;
BEGIN
  SELECT * INTO v_att FROM attempt WHERE tenant_id = p_op.tenant_id AND operation_id = p_op.id AND fencing_token = p_token;
  -- A token the operation never issued says nothing about it; an intent is not evidence.
  IF NOT FOUND OR p_state = 'intended' THEN
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(p_op));
  END IF;
  v_digest := encode(sha256(convert_to(jsonb_build_array(p_token, p_name, p_provider, p_state, p_request_id, p_resource_id)::text, 'UTF8')), 'hex');
  -- Why the attempt no longer holds the operation, in the words the trace and the 409 use.
  v_why := CASE
    WHEN p_op.fencing_token <> p_token THEN format('attempt %s started', p_op.attempt_count)
    WHEN p_op.resolution ->> 'outcome' = 'retry' AND p_op.state = 'pending' AND (p_op.resolution ->> 'at')::timestamptz >= v_att.started_at
      THEN 'an operator resolved the operation as retry'
    WHEN v_att.outcome IS NOT NULL AND v_att.outcome NOT IN ('lease_lost', 'taken_over')
      THEN format('the attempt had reported %s', tollgate_outcome_words(v_att.outcome))
    ELSE 'its lease ran out' END;
  -- Kept once: a repeat of a report already kept writes no second row, but is judged again (the
  -- operation may have moved since: an operator's retry, say), as a repeated late complete is.
  PERFORM 1 FROM audit_event WHERE tenant_id = p_op.tenant_id AND target_type = 'operation' AND target_id = p_op.id
    AND action = 'side_effect.late_report_refused' AND after ->> 'digest' = v_digest;
  v_kept := FOUND;

  -- What the effect's row already says, and which attempt said it: the report is news unless this
  -- attempt itself recorded as much (the same state, or one behind it) with the same provider ids.
  -- Another attempt's `confirmed` on the row does not make this attempt's `confirmed` old news:
  -- two calls may each have gone through.
  SELECT * INTO v_row FROM side_effect WHERE tenant_id = p_op.tenant_id AND operation_id = p_op.id AND name = p_name;
  -- An id the row lacked is no news either (under the lease it would only have been filled in).
  -- And a `confirmed` naming the resource the row's `confirmed` names is the same call, whichever
  -- attempt wrote it: the provider deduplicated on the shared key.
  v_news := p_state IN ('sent', 'confirmed', 'unknown') AND NOT coalesce(v_row.attempt_number = v_att.number
    AND (v_row.state = p_state OR (v_row.state IN ('confirmed', 'failed') AND p_state IN ('sent', 'unknown'))
      OR (v_row.state = 'unknown' AND p_state = 'sent'))
    AND (p_request_id IS NULL OR p_request_id = coalesce(v_row.provider_request_id, p_request_id))
    AND (p_resource_id IS NULL OR p_resource_id = coalesce(v_row.provider_resource_id, p_resource_id)), false)
    AND NOT coalesce(p_state = 'confirmed' AND v_row.state = 'confirmed' AND p_resource_id = v_row.provider_resource_id, false);

  IF v_news AND p_op.state = 'pending' AND ((p_op.fencing_token = p_token
      AND (v_att.complete_digest IS NOT NULL OR p_op.resolution ->> 'outcome' = 'retry')) OR p_state = 'confirmed') THEN
    -- Waiting to retry, before any retry started: the attempt that failed (retryable), or that an
    -- operator sent back to retry, says its effect happened or may have; or any earlier attempt
    -- says its call went through. The retry would call the provider again.
    v_by_operator := p_op.fencing_token = p_token AND p_op.resolution ->> 'outcome' = 'retry'
      AND (p_op.resolution ->> 'at')::timestamptz >= v_att.started_at;
    UPDATE operation SET state = 'unknown', not_before = NULL, updated_at = now(),
      error = jsonb_build_object('code', 'contradicting-reports', 'message',
        format('attempt %s reported side effect "%s" %s after %s: the effect may have happened', v_att.number, p_name, p_state, v_why)),
      flagged_at = CASE WHEN v_by_operator THEN now() ELSE flagged_at END,
      flag_reason = CASE WHEN v_by_operator
        THEN format('attempt %s reported side effect "%s" %s after an operator resolved the operation as retry', v_att.number, p_name, p_state)
        ELSE flag_reason END
    WHERE id = p_op.id AND state = 'pending' RETURNING * INTO v_new;
    PERFORM tollgate_audit(p_op.tenant_id, p_actor, 'operation.unknown', p_op.id,
      jsonb_build_object('state', p_op.state, 'attempt', v_att.number),
      jsonb_build_object('state', 'unknown', 'attempt', v_att.number, 'sideEffect', p_name, 'sideEffectState', p_state,
        'earlierOutcome', v_att.outcome, 'resolution', p_op.resolution -> 'outcome',
        'providerRequestId', p_request_id, 'providerResourceId', p_resource_id),
      format('attempt %s reported side effect "%s" %s after %s: the effect may have happened, so no retry runs until evidence or an operator settles it',
        v_att.number, p_name, p_state, v_why));
    p_op := v_new;
    v_acted := 'unknown';
    v_detail := format('This attempt no longer holds the operation (%s). Since the effect may have happened, the operation is now unknown: no retry runs until evidence or an operator settles it. Your report is kept as evidence on its trace.', v_why);
  ELSIF v_news AND NOT v_kept AND (p_op.state = 'failed' OR (p_state = 'confirmed' AND p_op.fencing_token <> p_token)) THEN
    -- A flag once per distinct report (a repeat would raise it again under an operator's eyes).
    SELECT takeover INTO v_takeover FROM tool WHERE tenant_id = p_op.tenant_id AND name = p_op.tool;
    IF p_op.state = 'failed' OR v_takeover IS DISTINCT FROM 'deduplicated' OR v_att.complete_digest IS NOT NULL THEN
      UPDATE operation SET flagged_at = now(), updated_at = now(),
        flag_reason = CASE WHEN p_op.state = 'failed'
          THEN format('attempt %s reported side effect "%s" %s, but the operation is failed', v_att.number, p_name, p_state)
          ELSE format('attempt %s reported side effect "%s" confirmed after attempt %s started: the provider may have acted twice', v_att.number, p_name, p_op.attempt_count) END
      WHERE id = p_op.id RETURNING * INTO p_op;
      v_acted := 'flagged';
      v_detail := format('This attempt no longer holds the operation: %s, and the operation is %s. Your report is kept as evidence on its trace, and the operation is flagged for an operator: %s.',
        v_why, p_op.state, CASE WHEN p_op.state = 'failed' THEN 'it says nothing happened' ELSE 'the provider may have acted twice' END);
    END IF;
  END IF;

  IF v_kept THEN
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(p_op), 'becameUnknown', coalesce(v_acted = 'unknown', false),
      'detail', coalesce(v_detail, format('This attempt no longer holds the operation: %s, and the operation is %s. This report is already kept as evidence on the operation''s trace.', v_why, p_op.state)));
  END IF;
  PERFORM tollgate_audit(p_op.tenant_id, p_actor, 'side_effect.late_report_refused', p_op.id, jsonb_build_object('state', v_state_before),
    jsonb_build_object('sideEffect', p_name, 'state', p_state, 'provider', p_provider, 'reportingAttempt', v_att.number,
      'newestAttempt', p_op.attempt_count, 'operationState', p_op.state, 'acted', v_acted, 'providerRequestId', p_request_id,
      'providerResourceId', p_resource_id, 'digest', v_digest),
    format('attempt %s reported side effect "%s" %s after %s; refused (lease-lost)%s', v_att.number, p_name, p_state, v_why,
      CASE v_acted WHEN 'unknown' THEN ', and the operation became unknown' WHEN 'flagged' THEN ', and the operation was flagged' ELSE '' END));
  RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(p_op), 'becameUnknown', coalesce(v_acted = 'unknown', false),
    'detail', coalesce(v_detail, format('This attempt no longer holds the operation: %s, and the operation is %s. The report changed nothing and is kept as evidence on the operation''s trace.', v_why, p_op.state)));
END $$;

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
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR NO KEY UPDATE; -- [changed]
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  IF v_op.fencing_token IS DISTINCT FROM p_token OR v_op.state NOT IN ('processing', 'succeeded', 'failed') THEN
    RETURN tollgate_side_effect_late_report(v_op, p_token, p_name, p_provider, v_state, p_request_id, p_resource_id, p_actor); -- [changed]
  END IF;
  IF v_op.state <> 'processing' THEN
    -- A webhook (or an operator matching one) settled the operation while this attempt held a
    -- live lease, and left the attempt open for its complete. Until that complete, the attempt
    -- may still report what its provider calls did: those ids are evidence for reconciliation.
    -- An attempt that ended (completed, or lost its lease) may not.
    PERFORM 1 FROM attempt WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token AND outcome IS NULL;
    IF NOT FOUND THEN -- [changed]
      RETURN tollgate_side_effect_late_report(v_op, p_token, p_name, p_provider, v_state, p_request_id, p_resource_id, p_actor);
    END IF;
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
  -- `sent` or `unknown` reported for an effect already confirmed or failed is behind,
  -- not backwards: a final state is final, and the report says no more than what happened after
  -- the request went out. Its provider's webhook (named by the effect's downstream key) routinely
  -- lands before the agent's own `sent`, which was 409 side-effect-backwards and lost the
  -- provider's request id (review, 2026-12-01). It answers with the effect as it stands and
  -- records the ids it lacked. One final state over the other is still refused.
  IF v_moves AND v_old.state IN ('confirmed', 'failed') AND v_state IN ('sent', 'unknown') THEN
    v_moves := false;
  END IF;
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
