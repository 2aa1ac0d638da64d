-- An inbox match says which status the operator saw (API review, 2026-12-01). Once an ignored
-- event could be matched (20261201110000_inbox_handled_view), a match racing an ignore of the same
-- event won after it: both answered 200, and the person who ignored was told "ignored" of an
-- event then matched. A new migration rather than an edit of that one: a database that applied
-- it keeps what it applied.
--
-- tollgate_webhook_match (from 20261201110000_inbox_handled_view) re-declared whole with one
-- more argument; the parts marked [changed] differ:
--  * p_seen_status: an event whose status is not the one the operator saw (decided meanwhile by
--    someone else) is refused, not matched over their decision unseen. Without it (NULL) only a
--    waiting event is matched; an ignored one needs p_seen_status 'ignored'.
--  * A match that only links a settled operation with the recorded outcome answers the
--    operation's flag when this event is the one about that operation (a contradicting event,
--    ignored, then matched with the recorded outcome left its own flag up). Another event
--    linked to the operation leaves a flag other evidence raised.
--  * A refusal names who decided the event and why, for the operator's message.
--
-- tollgate_webhook_ignore (from 20261129223221_webhook_ingest) re-declared whole; only the part
-- marked [changed] differs: a refusal names who decided the event and why.

DROP FUNCTION tollgate_webhook_match(text, text, text, text, text, text);

CREATE FUNCTION tollgate_webhook_match(p_tenant_id text, p_event_id text, p_op_id text, p_outcome text, p_reason text, p_actor text,
  p_seen_status text DEFAULT NULL) -- [changed] p_seen_status
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
  -- [changed] 'ignored' with p_seen_status 'ignored' only; a status other than the one seen is refused.
  IF v_event.status NOT IN ('unmatched', 'unmapped', 'contradicting', 'ignored')
    OR (v_event.status = 'ignored' AND p_seen_status IS DISTINCT FROM 'ignored')
    OR (p_seen_status IS NOT NULL AND p_seen_status <> v_event.status::text) THEN
    RETURN jsonb_build_object('code', 'event-decided', 'status', v_event.status, 'decidedBy', v_event.decided_by, 'reason', v_event.reason);
  END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  SELECT name INTO v_conn_name FROM webhook_connection WHERE id = v_event.connection_id;
  v_note := coalesce(nullif(btrim(p_reason), ''), 'matched webhook event ' || v_event.id || ' in the inbox');

  IF v_op.state IN ('processing', 'unknown') THEN
    v_op := tollgate_webhook_settle(v_op, p_outcome, p_actor, v_note,
      format('%s event %s (%s), matched by an operator', v_conn_name, v_event.provider_event_id, v_event.event_type));
    -- The operator settled it from the evidence: a flag raised meanwhile (this event's own,
    -- say "says failed, but side effects may have happened") is answered.
    v_cleared := v_op.flag_reason;
    IF v_op.flagged_at IS NOT NULL THEN
      UPDATE operation SET flagged_at = NULL, flag_reason = NULL WHERE id = v_op.id RETURNING * INTO v_op;
    END IF;
  ELSIF tollgate_effective_outcome(v_op.state) = p_outcome THEN
    -- [changed] The operator confirmed the recorded outcome from this event's own evidence about
    -- this operation: the flag it raised is answered. Another event linked here leaves it.
    IF v_op.flagged_at IS NOT NULL AND v_event.operation_id IS NOT DISTINCT FROM v_op.id THEN
      v_cleared := v_op.flag_reason;
      UPDATE operation SET flagged_at = NULL, flag_reason = NULL WHERE id = v_op.id RETURNING * INTO v_op;
    END IF;
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.webhook_matched', v_op.id, jsonb_build_object('state', v_op.state, 'flagReason', v_cleared),
      jsonb_build_object('state', v_op.state, 'eventId', v_event.id, 'outcome', p_outcome, 'clearedFlag', v_cleared), v_note); -- [changed] flag
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

CREATE OR REPLACE FUNCTION tollgate_webhook_ignore(p_tenant_id text, p_event_id text, p_reason text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_event webhook_event;
BEGIN
  IF nullif(btrim(p_reason), '') IS NULL THEN RAISE EXCEPTION 'tollgate_webhook_ignore needs a reason'; END IF;
  SELECT * INTO v_event FROM webhook_event WHERE id = p_event_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_event.status NOT IN ('unmatched', 'unmapped', 'contradicting') THEN
    RETURN jsonb_build_object('code', 'event-decided', 'status', v_event.status, 'decidedBy', v_event.decided_by, 'reason', v_event.reason); -- [changed]
  END IF;
  UPDATE webhook_event SET status = 'ignored', decided_by = p_actor, decided_at = now(), reason = p_reason WHERE id = v_event.id;
  PERFORM tollgate_webhook_event_audit(v_event, p_actor, 'webhook_event.ignored',
    jsonb_build_object('status', v_event.status, 'operationId', v_event.operation_id), jsonb_build_object('status', 'ignored'), p_reason);
  RETURN jsonb_build_object('code', 'ignored', 'eventId', v_event.id);
END $$;
