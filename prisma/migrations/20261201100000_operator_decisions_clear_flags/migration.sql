-- An operator's decision answers a flag (code review, 2026-12-01): a flag raised while the outcome
-- was open (a webhook that said failed although side effects may have happened) stayed up after
-- the operator resolved the operation or matched the event, and needed a second, separate clear.
-- tollgate_resolve (from 20261201010000_attempts_closed_after_settle) and tollgate_webhook_match
-- (from 20261129223221_webhook_ingest) are re-declared whole; only the parts marked [changed] differ.

CREATE OR REPLACE FUNCTION tollgate_resolve(p_tenant_id text, p_op_id text, p_outcome text, p_reason text, p_resource_id text,
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
    -- No backoff: the operator says retry now. (now() was this transaction's start, so a
    -- claim that had waited on the row lock, with an earlier start, answered 429 retry-backoff.)
    not_before = NULL,
    -- [changed] A person who settled the outcome has answered what a flag asked (evidence that
    -- disagreed); an automatic probe has not.
    flagged_at = CASE WHEN p_via = 'operator' THEN NULL ELSE flagged_at END,
    flag_reason = CASE WHEN p_via = 'operator' THEN NULL ELSE flag_reason END,
    max_attempts = CASE WHEN p_outcome = 'retry' THEN greatest(max_attempts, attempt_count + 1) ELSE max_attempts END,
    completed_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() END,
    result_expires_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() + make_interval(hours => v_tool.result_retention_hours) END
  WHERE id = p_op_id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.resolved', p_op_id,
    -- [changed] The flag it took down, if any.
    jsonb_build_object('state', v_op.state, 'flagReason', CASE WHEN p_via = 'operator' THEN v_op.flag_reason END),
    jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', p_via,
      'resourceId', p_resource_id, 'evidence', p_evidence), p_reason);
  RETURN jsonb_build_object('code', 'resolved', 'op', tollgate_op_view(v_new));
END $$;

CREATE OR REPLACE FUNCTION tollgate_webhook_match(p_tenant_id text, p_event_id text, p_op_id text, p_outcome text, p_reason text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_event webhook_event;
  v_op operation;
  v_conn_name text;
  v_note text;
  v_cleared text;
BEGIN
  SELECT * INTO v_event FROM webhook_event WHERE id = p_event_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_event.status NOT IN ('unmatched', 'unmapped', 'contradicting') THEN
    RETURN jsonb_build_object('code', 'event-decided', 'status', v_event.status);
  END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  SELECT name INTO v_conn_name FROM webhook_connection WHERE id = v_event.connection_id;
  v_note := coalesce(nullif(btrim(p_reason), ''), 'matched webhook event ' || v_event.id || ' in the inbox');

  IF v_op.state IN ('processing', 'unknown') THEN
    v_op := tollgate_webhook_settle(v_op, p_outcome, p_actor, v_note,
      format('%s event %s (%s), matched by an operator', v_conn_name, v_event.provider_event_id, v_event.event_type));
    -- [changed] The operator settled it from the evidence: a flag raised meanwhile (this event's own,
    -- say "says failed, but side effects may have happened") is answered.
    v_cleared := v_op.flag_reason;
    IF v_op.flagged_at IS NOT NULL THEN
      UPDATE operation SET flagged_at = NULL, flag_reason = NULL WHERE id = v_op.id RETURNING * INTO v_op;
    END IF;
  ELSIF tollgate_effective_outcome(v_op.state) = p_outcome THEN
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.webhook_matched', v_op.id, jsonb_build_object('state', v_op.state),
      jsonb_build_object('state', v_op.state, 'eventId', v_event.id, 'outcome', p_outcome), v_note);
  ELSE
    RETURN jsonb_build_object('code', 'invalid-state', 'op', tollgate_op_view(v_op));
  END IF;

  UPDATE webhook_event SET status = 'matched', operation_id = v_op.id, outcome = p_outcome, decided_by = p_actor,
    decided_at = now(), reason = v_note
  WHERE id = v_event.id;
  PERFORM tollgate_webhook_event_audit(v_event, p_actor, 'webhook_event.matched',
    jsonb_build_object('status', v_event.status, 'operationId', v_event.operation_id, 'outcome', v_event.outcome),
    jsonb_build_object('status', 'matched', 'operationId', v_op.id, 'outcome', p_outcome, 'operationState', v_op.state,
      'clearedFlag', v_cleared), v_note); -- [changed] clearedFlag
  RETURN jsonb_build_object('code', 'matched', 'op', tollgate_op_view(v_op), 'eventId', v_event.id);
END $$;
