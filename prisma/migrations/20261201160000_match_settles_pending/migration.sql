-- An inbox match naming an operation that waits to retry, or one awaiting approval, and one made
-- on an attempt older than the operation's latest (review, 2026-12-01). tollgate_webhook_settle
-- (from 20261201010000_attempts_closed_after_settle) re-declared whole, and tollgate_webhook_match
-- (from 20261201120000_match_what_was_seen) with one more argument (so dropped and created); only
-- the parts marked [changed] differ from them.

CREATE OR REPLACE FUNCTION tollgate_webhook_settle(v_op operation, p_outcome text, p_actor text, p_reason text, p_evidence text)
RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_tool tool;
  v_new operation;
  v_live boolean := v_op.state = 'processing' AND v_op.lease_expires_at > now();
  v_resource_id text;
BEGIN
  -- [changed] pending too: an operator matching evidence to an operation waiting to retry (its
  -- attempt ended with a retryable failure, so no attempt is open).
  IF v_op.state NOT IN ('processing', 'unknown', 'pending') OR p_outcome NOT IN ('succeeded', 'failed') THEN
    RAISE EXCEPTION 'tollgate_webhook_settle: % cannot settle a % operation', p_outcome, v_op.state;
  END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = v_op.tenant_id AND name = v_op.tool;
  -- The provider's resource id an attempt reported (say with its unknown outcome) is what the
  -- succeeded result points at, when the operation has none of its own.
  SELECT a.provider ->> 'resourceId' INTO v_resource_id FROM attempt a
  WHERE a.tenant_id = v_op.tenant_id AND a.operation_id = v_op.id AND a.provider ->> 'resourceId' IS NOT NULL
  ORDER BY a.number DESC LIMIT 1;
  IF NOT v_live THEN
    UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
      error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
    WHERE tenant_id = v_op.tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  END IF;
  UPDATE operation SET updated_at = now(), lease_expires_at = NULL, state = p_outcome::operation_state,
    resolution = jsonb_build_object('outcome', p_outcome, 'by', p_actor, 'via', 'webhook', 'reason', p_reason,
      'resourceId', CASE WHEN p_outcome = 'succeeded' THEN coalesce(v_op.result ->> 'resourceId', v_resource_id) END,
      'evidence', p_evidence, 'at', now(), 'fromState', v_op.state),
    result = CASE WHEN p_outcome = 'succeeded'
      THEN jsonb_build_object('statusCode', result -> 'statusCode', 'body', result -> 'body',
        'resourceId', coalesce(result -> 'resourceId', to_jsonb(v_resource_id)))
      ELSE result END,
    error = CASE WHEN p_outcome = 'succeeded' THEN NULL
      ELSE jsonb_build_object('code', 'resolved-failed', 'message', p_reason) END,
    not_before = NULL,
    -- A live lease's attempt stays open to report (an agreeing complete, its side
    -- effects' provider ids); until when, so the reaper closes it if it never does.
    open_attempt_until = CASE WHEN v_live THEN v_op.lease_expires_at END,
    completed_at = now(),
    result_expires_at = now() + make_interval(hours => coalesce(v_tool.result_retention_hours, 24))
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(v_op.tenant_id, p_actor, 'operation.resolved', v_op.id,
    jsonb_build_object('state', v_op.state, 'leaseLive', v_live),
    jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', 'webhook', 'resourceId', v_new.result ->> 'resourceId', 'evidence', p_evidence),
    p_reason);
  RETURN v_new;
END $$;

DROP FUNCTION tollgate_webhook_match(text, text, text, text, text, text, text);

CREATE FUNCTION tollgate_webhook_match(p_tenant_id text, p_event_id text, p_op_id text, p_outcome text, p_reason text, p_actor text,
  p_seen_status text DEFAULT NULL,
  p_seen_attempts integer DEFAULT NULL) -- [changed] p_seen_attempts
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
  -- 'ignored' with p_seen_status 'ignored' only; a status other than the one seen is refused.
  IF v_event.status NOT IN ('unmatched', 'unmapped', 'contradicting', 'ignored')
    OR (v_event.status = 'ignored' AND p_seen_status IS DISTINCT FROM 'ignored')
    OR (p_seen_status IS NOT NULL AND p_seen_status <> v_event.status::text) THEN
    RETURN jsonb_build_object('code', 'event-decided', 'status', v_event.status, 'decidedBy', v_event.decided_by, 'reason', v_event.reason);
  END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  -- [changed] The attempts the operator saw of the candidate they chose: one started since (a
  -- retry someone allowed) is not the attempt they weighed the event against.
  IF p_seen_attempts IS NOT NULL AND v_op.attempt_count <> p_seen_attempts THEN
    RETURN jsonb_build_object('code', 'operation-changed', 'op', tollgate_op_view(v_op));
  END IF;
  SELECT name INTO v_conn_name FROM webhook_connection WHERE id = v_event.connection_id;
  v_note := coalesce(nullif(btrim(p_reason), ''), 'matched webhook event ' || v_event.id || ' in the inbox');

  -- [changed] An operation waiting to retry is settled too: evidence that its call succeeded
  -- stops the retry from running it again, and "failed" ends the retries as the form says. It
  -- was linked without settling (failed: the retry ran anyway) or refused (succeeded: nothing
  -- could stop the retry; neither resolve nor match takes a pending operation).
  IF v_op.state IN ('processing', 'unknown', 'pending') THEN
    v_op := tollgate_webhook_settle(v_op, p_outcome, p_actor, v_note,
      format('%s event %s (%s), matched by an operator', v_conn_name, v_event.provider_event_id, v_event.event_type));
    -- The operator settled it from the evidence: a flag raised meanwhile (this event's own,
    -- say "says failed, but side effects may have happened") is answered.
    v_cleared := v_op.flag_reason;
    IF v_op.flagged_at IS NOT NULL THEN
      UPDATE operation SET flagged_at = NULL, flag_reason = NULL WHERE id = v_op.id RETURNING * INTO v_op;
    END IF;
  -- [changed] Not an operation awaiting approval: nothing of it has run, so no event is about it
  -- yet; "failed" was linked as if it had settled it, and the approval then ran the tool.
  ELSIF v_op.state <> 'awaiting_approval' AND tollgate_effective_outcome(v_op.state) = p_outcome THEN
    -- The operator confirmed the recorded outcome from this event's own evidence about
    -- this operation: the flag it raised is answered. Another event linked here leaves it.
    IF v_op.flagged_at IS NOT NULL AND v_event.operation_id IS NOT DISTINCT FROM v_op.id THEN
      v_cleared := v_op.flag_reason;
      UPDATE operation SET flagged_at = NULL, flag_reason = NULL WHERE id = v_op.id RETURNING * INTO v_op;
    END IF;
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.webhook_matched', v_op.id, jsonb_build_object('state', v_op.state, 'flagReason', v_cleared),
      jsonb_build_object('state', v_op.state, 'eventId', v_event.id, 'outcome', p_outcome, 'clearedFlag', v_cleared), v_note);
  ELSE
    RETURN jsonb_build_object('code', 'invalid-state', 'op', tollgate_op_view(v_op));
  END IF;

  UPDATE webhook_event SET status = 'matched', operation_id = v_op.id, outcome = p_outcome, decided_by = p_actor,
    decided_at = now(), reason = v_note
  WHERE id = v_event.id;
  PERFORM tollgate_webhook_event_audit(v_event, p_actor, 'webhook_event.matched',
    jsonb_build_object('status', v_event.status, 'operationId', v_event.operation_id, 'outcome', v_event.outcome),
    jsonb_build_object('status', 'matched', 'operationId', v_op.id, 'outcome', p_outcome, 'operationState', v_op.state,
      'clearedFlag', v_cleared), v_note);
  RETURN jsonb_build_object('code', 'matched', 'op', tollgate_op_view(v_op), 'eventId', v_event.id);
END $$;
