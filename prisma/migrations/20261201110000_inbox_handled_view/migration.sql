-- The inbox's handled view (console review, 2026-12-01): the events a person decided, newest
-- decision first, and a mistaken ignore put right by matching the event after all.
--
-- The view reads decisions by (tenant, decided_at); only a person's match or ignore sets
-- decided_by, so the index holds the inbox's history and nothing an automatic match stored.
CREATE INDEX "webhook_event_decided_idx" ON "webhook_event" ("tenant_id", "decided_at") WHERE "decided_by" IS NOT NULL;

-- tollgate_webhook_match (from 20261201100000_operator_decisions_clear_flags) re-declared whole
-- with one more argument; the parts marked [changed] differ:
--  * An ignored event may be matched. Ignoring says "no operation needs this", and the evidence
--    for an unknown operation found later can be exactly that event; the ignore stays in the
--    audit log, the match's audit row records the status before it (ignored).
--  * The match says which status the operator saw (p_seen_status): an event decided meanwhile
--    by someone else (ignored in another tab) is refused, not matched over their decision
--    unseen (API review: a concurrent ignore and match both answered 200). Without it (NULL)
--    only a waiting event is matched, as before; an ignored one needs p_seen_status 'ignored'.
--  * A match that only links a settled operation whose outcome the operator confirms answers
--    the operation's flag too, as a settling match does (a contradicting event, ignored, then
--    matched with the recorded outcome left its own flag up).
--  * A refusal names who decided the event and why, for the operator's message.
-- A matched event stays decided.
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
    -- [changed] The operator confirmed the recorded outcome from this evidence: its flag is answered.
    v_cleared := v_op.flag_reason;
    IF v_op.flagged_at IS NOT NULL THEN
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

-- tollgate_webhook_ignore (from 20261129223221_webhook_ingest) re-declared whole; only the part
-- marked [changed] differs: a refusal names who decided the event and why.
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
