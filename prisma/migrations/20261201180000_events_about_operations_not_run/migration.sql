-- Provider events about an operation that has not run yet (awaiting approval, or approved and not
-- yet claimed), and correlation values that copied the payload (webhook review, 2026-12-01):
-- - ingest took "failed" about such an operation as agreeing (matched, never in the inbox) and
--   "succeeded" about an approved one as contradicting a failed attempt that never was; both are
--   now contradicting: the operation is flagged, left as it is, and the event waits in the inbox;
-- - an inbox match settled an approved, never-claimed operation (succeeded with no attempt, and
--   the agent's claim replayed it); it is refused as one awaiting approval is;
-- - an object or array at the correlation path was stored as its JSON text, at any length.
--
-- tollgate_webhook_ingest (from 20261201130000_webhook_success_stops_retry), tollgate_webhook_settle
-- and tollgate_webhook_match (from 20261201160000_match_settles_pending) re-declared whole, with
-- the same signatures; only the parts marked [changed] differ from them.

-- Nothing of the operation has run: no attempt was granted, so no provider saw its call.
CREATE FUNCTION tollgate_not_run(p_op operation) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT p_op.state = 'awaiting_approval' OR (p_op.state = 'pending' AND p_op.attempt_count = 0)
$$;

CREATE OR REPLACE FUNCTION tollgate_webhook_ingest(p_connection_id text, p_version timestamptz, p_event_id text,
  p_provider_event_id text, p_event_type text, p_payload jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_conn webhook_connection;
  v_op operation;
  v_value text;
  v_outcome text;
  v_status webhook_event_status;
  v_id text;
  v_actor text := 'webhook:' || p_event_id;
  v_effect side_effect;
  v_effect_state side_effect_state;
  v_alone boolean := true;
  v_effects text;
  v_unknown boolean := false;
  v_path text[]; -- [changed]
BEGIN
  SELECT * INTO v_conn FROM webhook_connection WHERE id = p_connection_id;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_conn.updated_at IS DISTINCT FROM p_version THEN RETURN jsonb_build_object('code', 'stale'); END IF;

  -- A redelivery of a stored event answers at once, without touching the operation. This read
  -- is only a shortcut: the unique index below is what guarantees one event per provider id.
  SELECT id INTO v_id FROM webhook_event WHERE connection_id = p_connection_id AND provider_event_id = p_provider_event_id;
  IF FOUND THEN RETURN jsonb_build_object('code', 'duplicate', 'eventId', v_id); END IF;

  -- [changed] Only a string or a number at the path is a correlation value, and only up to 500
  -- characters (no operation id or downstream key is longer). An object or array there (a path
  -- that points too high) was stored as its JSON text, at any length: a copy of the payload that
  -- outlived the payload's retention.
  v_path := string_to_array(v_conn.correlation_path, '.');
  IF jsonb_typeof(p_payload #> v_path) IN ('string', 'number') THEN
    v_value := p_payload #>> v_path;
    IF length(v_value) NOT BETWEEN 1 AND 500 THEN v_value := NULL; END IF;
  END IF;
  v_outcome := v_conn.outcomes ->> p_event_type;
  IF v_outcome NOT IN ('succeeded', 'failed') THEN v_outcome := NULL; END IF;
  IF v_value IS NOT NULL THEN -- [changed]
    -- An operation id or a downstream key of the connection's tenant; nobody else's.
    SELECT * INTO v_op FROM operation
    WHERE tenant_id = v_conn.tenant_id AND (id = v_value OR downstream_key = v_value)
    ORDER BY (id = v_value) DESC LIMIT 1 FOR UPDATE;
    IF v_op.id IS NULL THEN
      -- A side effect's own downstream key (the one its provider saw) names its operation too.
      SELECT o.* INTO v_op FROM side_effect s JOIN operation o ON o.id = s.operation_id AND o.tenant_id = s.tenant_id
      WHERE s.tenant_id = v_conn.tenant_id AND s.downstream_key = v_value
      FOR UPDATE OF o;
      IF v_op.id IS NOT NULL THEN
        SELECT * INTO v_effect FROM side_effect WHERE tenant_id = v_conn.tenant_id AND downstream_key = v_value FOR UPDATE;
        v_alone := NOT EXISTS (SELECT 1 FROM side_effect
          WHERE tenant_id = v_conn.tenant_id AND operation_id = v_op.id AND id <> v_effect.id);
      END IF;
    END IF;
  END IF;
  IF v_effect.id IS NOT NULL AND v_outcome IS NOT NULL THEN
    v_effect_state := CASE v_outcome WHEN 'succeeded' THEN 'confirmed' ELSE 'failed' END;
  END IF;
  -- `failed` promises every retry that nothing happened. An event that names the
  -- operation itself (not one of its side effects) and says failed, about an operation that
  -- recorded side effects the providers may have acted on (sent, unknown, confirmed), does not
  -- settle it: as an agent's failed is turned into unknown then (tollgate_complete), the event is
  -- contradicting, the operation flagged, and an operator decides from the inbox (API review).
  IF v_effect.id IS NULL AND v_op.id IS NOT NULL AND v_outcome = 'failed' AND v_op.state IN ('processing', 'unknown') THEN
    SELECT string_agg(format('%s: %s', name, state), ', ' ORDER BY name) INTO v_effects
    FROM side_effect WHERE tenant_id = v_conn.tenant_id AND operation_id = v_op.id AND state IN ('sent', 'unknown', 'confirmed');
  END IF;

  -- Named by a side effect's key, the event is evidence about that one provider call: it may
  -- contradict the effect's own final state; it settles the operation only when that call is
  -- the operation's only side effect (one charge of two calls says nothing of the other). Against
  -- a settled operation it is judged like any event: a charge that succeeded under an operation
  -- that failed (or the reverse) is contradicting, whatever else the operation called.
  v_status := CASE
    WHEN v_op.id IS NULL THEN 'unmatched'
    WHEN v_outcome IS NULL THEN 'unmapped'
    WHEN tollgate_not_run(v_op) THEN 'contradicting' -- [changed]
    WHEN v_effect.state IN ('confirmed', 'failed') AND v_effect.state <> v_effect_state THEN 'contradicting'
    WHEN v_effects IS NOT NULL THEN 'contradicting'
    WHEN v_op.state IN ('processing', 'unknown') THEN 'matched'
    WHEN tollgate_effective_outcome(v_op.state) = v_outcome THEN 'matched'
    ELSE 'contradicting' END;

  -- Concurrent deliveries of one event queue on the operation's lock above (or on this index
  -- entry when there is no operation); exactly one inserts, the others find the conflict.
  INSERT INTO webhook_event (id, tenant_id, connection_id, provider_event_id, event_type, payload, correlation_value,
    status, outcome, operation_id)
  VALUES (p_event_id, v_conn.tenant_id, p_connection_id, p_provider_event_id, p_event_type, p_payload, v_value,
    v_status, v_outcome, v_op.id)
  ON CONFLICT (connection_id, provider_event_id) DO NOTHING
  RETURNING id INTO v_id;
  IF NOT FOUND THEN
    SELECT id INTO v_id FROM webhook_event WHERE connection_id = p_connection_id AND provider_event_id = p_provider_event_id;
    RETURN jsonb_build_object('code', 'duplicate', 'eventId', v_id);
  END IF;

  IF v_status = 'matched' AND v_effect.id IS NOT NULL AND v_effect.state NOT IN ('confirmed', 'failed') THEN
    UPDATE side_effect SET state = v_effect_state, updated_at = now() WHERE id = v_effect.id;
    PERFORM tollgate_audit(v_conn.tenant_id, v_actor, 'side_effect.' || v_effect_state, v_op.id,
      jsonb_build_object('sideEffect', v_effect.name, 'state', v_effect.state, 'attempt', v_effect.attempt_number),
      jsonb_build_object('sideEffect', v_effect.name, 'state', v_effect_state, 'provider', v_effect.provider,
        'attempt', v_effect.attempt_number, 'providerRequestId', v_effect.provider_request_id,
        'providerResourceId', v_effect.provider_resource_id, 'eventId', p_event_id),
      'reported by webhook ' || p_event_id);
  END IF;
  -- The provider says succeeded about an operation waiting to retry: its attempt
  -- reported failed (retryable), yet the effect happened, and the next claim would run the tool
  -- again. Whichever way the event contradicts (the operation's outcome, or the state of the side
  -- effect it names), the operation becomes unknown, as an agent's own "failed (retryable), then
  -- succeeded" does (tollgate_complete): a retry gets 409 outcome-unknown, the reconcile queue and
  -- the inbox show it, and an operator settles it (matching this event settles it as succeeded).
  -- [changed] An operation that has not run (awaiting approval, or approved and not yet claimed):
  -- no attempt of it can have caused an event. "failed" was taken as agreeing (matched, out of
  -- the inbox), and "succeeded" about an approved one was read as contradicting a failed attempt
  -- that never was (unknown, with an error about attempt 0). Now the event waits in the inbox and:
  -- * approved and not yet claimed, "succeeded": someone acted without an attempt (the 202 gave
  --   the agent its downstream key). The claim would run the tool again, so the operation becomes
  --   unknown (a claim gets 409 outcome-unknown), flagged, with what the event says, for an operator;
  -- * otherwise the operation is flagged and left as it is: a "failed" promises nothing happened,
  --   and one awaiting approval waits for a person, whose approval page shows the flag.
  IF v_status = 'contradicting' AND v_op.state = 'pending' AND v_op.attempt_count = 0 AND v_outcome = 'succeeded' THEN
    UPDATE operation SET state = 'unknown', not_before = NULL, updated_at = now(), flagged_at = now(),
      flag_reason = format('webhook %s (%s) says succeeded, but the operation has not run yet (approved, not yet claimed)',
        p_event_id, p_event_type),
      error = jsonb_build_object('code', 'contradicting-reports', 'message',
        format('provider event %s (%s) says succeeded, but no attempt of the operation had run: the effect may have happened without one',
          p_provider_event_id, p_event_type))
    WHERE id = v_op.id;
    PERFORM tollgate_audit(v_op.tenant_id, v_actor, 'operation.unknown', v_op.id,
      jsonb_build_object('state', v_op.state, 'attempts', v_op.attempt_count),
      jsonb_build_object('state', 'unknown', 'attempts', v_op.attempt_count, 'eventId', p_event_id, 'eventType', p_event_type,
        'reportedOutcome', v_outcome),
      format('provider event %s (%s) says succeeded before any attempt ran: no attempt runs until an operator settles it',
        p_provider_event_id, p_event_type));
    v_unknown := true;
  ELSIF v_status = 'contradicting' AND tollgate_not_run(v_op) THEN
    UPDATE operation SET flagged_at = now(), updated_at = now(),
      flag_reason = format('webhook %s (%s) says %s, but the operation has not run yet (%s)', p_event_id, p_event_type, v_outcome,
        CASE v_op.state WHEN 'awaiting_approval' THEN 'awaiting approval' ELSE 'approved, not yet claimed' END)
    WHERE id = v_op.id;
    PERFORM tollgate_audit(v_op.tenant_id, v_actor, 'operation.webhook_conflict', v_op.id,
      jsonb_build_object('state', v_op.state, 'attempts', v_op.attempt_count),
      jsonb_build_object('eventId', p_event_id, 'eventType', p_event_type, 'reportedOutcome', v_outcome),
      'a provider webhook about an operation that has not run yet; not applied');
  ELSIF v_status = 'contradicting' AND v_op.state = 'pending' AND v_outcome = 'succeeded' THEN
    UPDATE operation SET state = 'unknown', not_before = NULL, updated_at = now(), flagged_at = now(),
      flag_reason = format('webhook %s (%s) says succeeded, but attempt %s reported failed (retryable)',
        p_event_id, p_event_type, v_op.attempt_count),
      error = jsonb_build_object('code', 'contradicting-reports', 'message',
        format('attempt %s reported failed (retryable), but provider event %s (%s) says succeeded: the effect happened',
          v_op.attempt_count, p_provider_event_id, p_event_type))
    WHERE id = v_op.id;
    PERFORM tollgate_audit(v_op.tenant_id, v_actor, 'operation.unknown', v_op.id,
      jsonb_build_object('state', v_op.state, 'attempt', v_op.attempt_count, 'notBefore', v_op.not_before),
      jsonb_build_object('state', 'unknown', 'attempt', v_op.attempt_count, 'eventId', p_event_id, 'eventType', p_event_type,
        'reportedOutcome', v_outcome, 'sideEffect', v_effect.name),
      format('provider event %s (%s) says succeeded after attempt %s reported failed (retryable): no retry runs until an operator settles it',
        p_provider_event_id, p_event_type, v_op.attempt_count));
    -- The side effect it names is confirmed by its provider (unless a final state was recorded).
    IF v_effect.id IS NOT NULL AND v_effect.state NOT IN ('confirmed', 'failed') THEN
      UPDATE side_effect SET state = 'confirmed', updated_at = now() WHERE id = v_effect.id;
      PERFORM tollgate_audit(v_conn.tenant_id, v_actor, 'side_effect.confirmed', v_op.id,
        jsonb_build_object('sideEffect', v_effect.name, 'state', v_effect.state, 'attempt', v_effect.attempt_number),
        jsonb_build_object('sideEffect', v_effect.name, 'state', 'confirmed', 'provider', v_effect.provider,
          'attempt', v_effect.attempt_number, 'providerRequestId', v_effect.provider_request_id,
          'providerResourceId', v_effect.provider_resource_id, 'eventId', p_event_id),
        'reported by webhook ' || p_event_id);
    END IF;
    v_unknown := true;
  ELSIF v_status = 'matched' AND v_op.state IN ('processing', 'unknown') AND v_alone THEN
    PERFORM tollgate_webhook_settle(v_op, v_outcome, v_actor, 'resolved by webhook ' || p_event_id,
      format('%s event %s (%s)', v_conn.name, p_provider_event_id, p_event_type));
  ELSIF v_status = 'contradicting' AND v_effect.state IN ('confirmed', 'failed') AND v_effect.state <> v_effect_state THEN
    UPDATE operation SET flagged_at = now(), updated_at = now(),
      flag_reason = format('webhook %s (%s) says %s, but side effect %s is %s', p_event_id, p_event_type, v_outcome,
        v_effect.name, v_effect.state)
    WHERE id = v_op.id;
    PERFORM tollgate_audit(v_op.tenant_id, v_actor, 'operation.webhook_conflict', v_op.id,
      jsonb_build_object('state', v_op.state, 'sideEffect', v_effect.name, 'sideEffectState', v_effect.state),
      jsonb_build_object('eventId', p_event_id, 'eventType', p_event_type, 'reportedOutcome', v_outcome),
      'a provider webhook contradicts the recorded state of the side effect it names');
  ELSIF v_status = 'contradicting' AND v_effects IS NOT NULL THEN
    -- Flagged for an operator, with what may have happened.
    UPDATE operation SET flagged_at = now(), updated_at = now(),
      flag_reason = format('webhook %s (%s) says failed, but side effects may have happened (%s)', p_event_id, p_event_type, v_effects)
    WHERE id = v_op.id;
    PERFORM tollgate_audit(v_op.tenant_id, v_actor, 'operation.webhook_conflict', v_op.id,
      jsonb_build_object('state', v_op.state, 'sideEffects', v_effects),
      jsonb_build_object('eventId', p_event_id, 'eventType', p_event_type, 'reportedOutcome', v_outcome),
      format('the provider says failed, but side effects may have happened (%s); not applied', v_effects));
  ELSIF v_status = 'contradicting' THEN
    PERFORM tollgate_webhook_flag(v_op, p_event_id, p_event_type, v_outcome, v_actor);
  END IF;
  RETURN jsonb_build_object('code', 'stored', 'eventId', p_event_id, 'status', v_status, 'operationId', v_op.id,
    'tenantId', v_conn.tenant_id, 'becameUnknown', v_unknown);
END $$;

CREATE OR REPLACE FUNCTION tollgate_webhook_settle(v_op operation, p_outcome text, p_actor text, p_reason text, p_evidence text)
RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_tool tool;
  v_new operation;
  v_live boolean := v_op.state = 'processing' AND v_op.lease_expires_at > now();
  v_resource_id text;
BEGIN
  -- pending too: an operator matching evidence to an operation waiting to retry (its attempt
  -- ended with a retryable failure, so no attempt is open). [changed] Not one that never ran.
  IF v_op.state NOT IN ('processing', 'unknown', 'pending') OR tollgate_not_run(v_op) OR p_outcome NOT IN ('succeeded', 'failed') THEN
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

CREATE OR REPLACE FUNCTION tollgate_webhook_match(p_tenant_id text, p_event_id text, p_op_id text, p_outcome text, p_reason text, p_actor text,
  p_seen_status text DEFAULT NULL,
  p_seen_attempts integer DEFAULT NULL)
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
  SELECT name INTO v_conn_name FROM webhook_connection WHERE id = v_event.connection_id;
  v_note := coalesce(nullif(btrim(p_reason), ''), 'matched webhook event ' || v_event.id || ' in the inbox');

  -- An operation waiting to retry is settled too: evidence that its call succeeded stops the
  -- retry from running it again, and "failed" ends the retries as the form says. [changed] Not
  -- one that never ran (approved, not yet claimed): it settled as succeeded with no attempt, and
  -- the agent's claim then replayed a success of a tool that never ran.
  IF v_op.state IN ('processing', 'unknown', 'pending') AND NOT tollgate_not_run(v_op) THEN
    v_op := tollgate_webhook_settle(v_op, p_outcome, p_actor, v_note,
      format('%s event %s (%s), matched by an operator', v_conn_name, v_event.provider_event_id, v_event.event_type));
    -- The operator settled it from the evidence: a flag raised meanwhile (this event's own,
    -- say "says failed, but side effects may have happened") is answered.
    v_cleared := v_op.flag_reason;
    IF v_op.flagged_at IS NOT NULL THEN
      UPDATE operation SET flagged_at = NULL, flag_reason = NULL WHERE id = v_op.id RETURNING * INTO v_op;
    END IF;
  -- Not an operation that has not run ([changed] approved and not yet claimed, as well as
  -- awaiting approval): no event is about it yet; "failed" was linked as if it had settled it,
  -- and the approval (or the claim) then ran the tool.
  ELSIF NOT tollgate_not_run(v_op) AND tollgate_effective_outcome(v_op.state) = p_outcome THEN
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
