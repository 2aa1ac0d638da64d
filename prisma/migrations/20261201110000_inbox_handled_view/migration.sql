-- The inbox's handled view (console review, 2026-12-01): the events a person decided, newest
-- decision first, and a mistaken ignore put right by matching the event after all.
--
-- The view reads decisions by (tenant, decided_at); only a person's match or ignore sets
-- decided_by, so the index holds the inbox's history and nothing an automatic match stored.
CREATE INDEX "webhook_event_decided_idx" ON "webhook_event" ("tenant_id", "decided_at") WHERE "decided_by" IS NOT NULL;

-- tollgate_webhook_match (from 20261201100000_operator_decisions_clear_flags) re-declared whole;
-- only the part marked [changed] differs: an ignored event may be matched. Ignoring says "no
-- operation needs this", and the evidence for an unknown operation found later can be exactly
-- that event; the ignore stays in the audit log, the match's audit row records the event's
-- status before it (ignored). A matched event stays decided.
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
  IF v_event.status NOT IN ('unmatched', 'unmapped', 'contradicting', 'ignored') THEN -- [changed] 'ignored'
    RETURN jsonb_build_object('code', 'event-decided', 'status', v_event.status);
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
      'clearedFlag', v_cleared), v_note);
  RETURN jsonb_build_object('code', 'matched', 'op', tollgate_op_view(v_op), 'eventId', v_event.id);
END $$;
