-- From a review (2026-12-02): matching an inbox event could take down a flag nobody had seen.
-- Confirming a settled operation's outcome from a contradicting event cleared whatever flag stood
-- on it once the event was linked there, including one raised after the inbox was read (a later
-- complete from the same attempt reporting another outcome, another event): the operation left
-- the flagged list and only the audit's clearedFlag said so. Settling an unknown operation from
-- the inbox cleared any flag likewise. Now the console says which flag it showed, a match whose
-- operation's flag changed since is a 409 like a new attempt, and confirming takes down only the
-- flag the event itself raised.
--
-- tollgate_webhook_match (from 20261201180000_events_about_operations_not_run), re-declared whole
-- with two more parameters; only the parts marked [changed] differ.
DROP FUNCTION tollgate_webhook_match(text, text, text, text, text, text, text, integer);

-- Whether the flag standing on an operation is the one this event raised as it was stored: the
-- ingest flags in the transaction that inserts the event, so the flag carries the event's time
-- (now(), both timestamptz(3)), and every flag an ingest writes begins "webhook <event id> (".
-- The time alone would take two flags raised in one millisecond (two deliveries back to back) for one.
CREATE FUNCTION tollgate_flag_is_events(p_op operation, p_event webhook_event) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(p_op.flagged_at = p_event.received_at AND starts_with(p_op.flag_reason, 'webhook ' || p_event.id || ' ('), false)
$$;

CREATE FUNCTION tollgate_webhook_match(p_tenant_id text, p_event_id text, p_op_id text, p_outcome text, p_reason text, p_actor text,
  p_seen_status text DEFAULT NULL,
  p_seen_attempts integer DEFAULT NULL,
  p_seen_flag_known boolean DEFAULT false, -- [changed] the flag the inbox showed on the operation
  p_seen_flagged_at timestamptz DEFAULT NULL)
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
  -- The attempts the operator saw of the candidate they chose: one started since (a
  -- retry someone allowed) is not the attempt they weighed the event against.
  IF p_seen_attempts IS NOT NULL AND v_op.attempt_count <> p_seen_attempts THEN
    RETURN jsonb_build_object('code', 'operation-changed', 'op', tollgate_op_view(v_op));
  END IF;
  -- [changed] The flag the operator saw on it, or that it had none: a match may take a flag down
  -- (below), so one raised since (or cleared by someone else) is refused like a new attempt, and
  -- the operator reads it before deciding.
  IF p_seen_flag_known AND v_op.flagged_at IS DISTINCT FROM p_seen_flagged_at THEN
    RETURN jsonb_build_object('code', 'operation-changed', 'changed', 'flag', 'op', tollgate_op_view(v_op),
      'flagged', v_op.flagged_at IS NOT NULL);
  END IF;
  SELECT name INTO v_conn_name FROM webhook_connection WHERE id = v_event.connection_id;
  v_note := coalesce(nullif(btrim(p_reason), ''), 'matched webhook event ' || v_event.id || ' in the inbox');

  -- An operation waiting to retry is settled too: evidence that its call succeeded stops the
  -- retry from running it again, and "failed" ends the retries as the form says. Not
  -- one that never ran (approved, not yet claimed): it settled as succeeded with no attempt, and
  -- the agent's claim then replayed a success of a tool that never ran.
  IF v_op.state IN ('processing', 'unknown', 'pending') AND NOT tollgate_not_run(v_op) THEN
    v_op := tollgate_webhook_settle(v_op, p_outcome, p_actor, v_note,
      format('%s event %s (%s), matched by an operator', v_conn_name, v_event.provider_event_id, v_event.event_type));
    -- The operator settled it from the evidence: the flag standing on it (this event's own,
    -- say "says failed, but side effects may have happened") is answered. [changed] Only a flag
    -- the operator saw (the console says which, checked above) or this event raised as it was
    -- stored (it carries the event's time; see below): an unseen one stays for someone to read.
    IF v_op.flagged_at IS NOT NULL AND (p_seen_flag_known
        OR (v_event.operation_id IS NOT DISTINCT FROM v_op.id AND tollgate_flag_is_events(v_op, v_event))) THEN
      v_cleared := v_op.flag_reason;
      UPDATE operation SET flagged_at = NULL, flag_reason = NULL WHERE id = v_op.id RETURNING * INTO v_op;
    END IF;
  -- Not an operation that has not run (approved and not yet claimed, as well as
  -- awaiting approval): no event is about it yet; "failed" was linked as if it had settled it,
  -- and the approval (or the claim) then ran the tool.
  ELSIF NOT tollgate_not_run(v_op) AND tollgate_effective_outcome(v_op.state) = p_outcome THEN
    -- The operator confirmed the recorded outcome from this event's own evidence about
    -- this operation: the flag it raised is answered. Another event linked here leaves it.
    -- [changed] So does a flag raised after this event arrived (a later complete or event about
    -- the operation): see tollgate_flag_is_events.
    IF v_op.flagged_at IS NOT NULL AND v_event.operation_id IS NOT DISTINCT FROM v_op.id
      AND tollgate_flag_is_events(v_op, v_event) THEN
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
