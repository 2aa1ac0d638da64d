-- Provider webhooks (issue 5): ingest a verified event, match it to an operation and settle the
-- operation, all in ONE round trip under the operation's row lock; and the inbox's operator
-- actions (match, ignore). Signatures are verified in the app before any of this runs.
-- Lock order everywhere: the operation row, then the event row (ingest never locks an existing
-- event; the operator's match locks the event first but only ever waits on the operation).

-- What an operation's settled state says about the provider call, for comparing with a
-- webhook's outcome: only `succeeded` means the effect happened. pending (a retryable failure
-- waiting for backoff), awaiting_approval and rejected all mean "no effect (yet)".
CREATE FUNCTION tollgate_effective_outcome(p_state operation_state) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_state WHEN 'succeeded' THEN 'succeeded' WHEN 'processing' THEN NULL WHEN 'unknown' THEN NULL ELSE 'failed' END
$$;

-- Settles a locked processing or unknown operation as the webhook (or an operator matching one)
-- says. Unlike tollgate_resolve it also takes a processing operation whose lease is still live:
-- the provider's word is the evidence, and the agent's later complete is then compared with it
-- by tollgate_complete (same outcome → 200, different → 409 already-resolved and a flag). A
-- live attempt is left open for that complete to close; an expired one lost its lease.
CREATE FUNCTION tollgate_webhook_settle(v_op operation, p_outcome text, p_actor text, p_reason text, p_evidence text)
RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_tool tool;
  v_new operation;
  v_live boolean := v_op.state = 'processing' AND v_op.lease_expires_at > now();
BEGIN
  IF v_op.state NOT IN ('processing', 'unknown') OR p_outcome NOT IN ('succeeded', 'failed') THEN
    RAISE EXCEPTION 'tollgate_webhook_settle: % cannot settle a % operation', p_outcome, v_op.state;
  END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = v_op.tenant_id AND name = v_op.tool;
  IF NOT v_live THEN
    UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
      error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
    WHERE tenant_id = v_op.tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  END IF;
  UPDATE operation SET updated_at = now(), lease_expires_at = NULL, state = p_outcome::operation_state,
    resolution = jsonb_build_object('outcome', p_outcome, 'by', p_actor, 'via', 'webhook', 'reason', p_reason,
      'resourceId', NULL, 'evidence', p_evidence, 'at', now(), 'fromState', v_op.state),
    result = CASE WHEN p_outcome = 'succeeded'
      THEN jsonb_build_object('statusCode', result -> 'statusCode', 'body', result -> 'body', 'resourceId', result -> 'resourceId')
      ELSE result END,
    error = CASE WHEN p_outcome = 'succeeded' THEN NULL
      ELSE jsonb_build_object('code', 'resolved-failed', 'message', p_reason) END,
    not_before = NULL,
    completed_at = now(),
    result_expires_at = now() + make_interval(hours => coalesce(v_tool.result_retention_hours, 24))
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(v_op.tenant_id, p_actor, 'operation.resolved', v_op.id,
    jsonb_build_object('state', v_op.state, 'leaseLive', v_live),
    jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', 'webhook', 'resourceId', NULL, 'evidence', p_evidence),
    p_reason);
  RETURN v_new;
END $$;

-- Marks a locked operation whose settled state contradicts a webhook: flagged for an operator,
-- never changed.
CREATE FUNCTION tollgate_webhook_flag(v_op operation, p_event_id text, p_event_type text, p_outcome text, p_actor text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE operation SET flagged_at = now(), updated_at = now(),
    flag_reason = format('webhook %s (%s) says %s, but the operation is %s', p_event_id, p_event_type, p_outcome, v_op.state)
  WHERE id = v_op.id;
  PERFORM tollgate_audit(v_op.tenant_id, p_actor, 'operation.webhook_conflict', v_op.id,
    jsonb_build_object('state', v_op.state),
    jsonb_build_object('eventId', p_event_id, 'eventType', p_event_type, 'reportedOutcome', p_outcome),
    'a provider webhook contradicts the recorded outcome');
END $$;

-- POST /api/v1/webhooks/{connectionId}, after the signature was verified. p_version is the
-- connection's updated_at the app verified against: if the connection changed since (secrets
-- rotated, outcomes edited), answer "stale" so the app reloads it and verifies again.
-- Returns { code: "stored" | "duplicate" | "stale" | "not-found", status, eventId, operationId }.
CREATE FUNCTION tollgate_webhook_ingest(p_connection_id text, p_version timestamptz, p_event_id text,
  p_provider_event_id text, p_event_type text, p_payload jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_conn webhook_connection;
  v_op operation;
  v_value text;
  v_outcome text;
  v_status webhook_event_status;
  v_id text;
  v_actor text := 'webhook:' || p_event_id;
BEGIN
  SELECT * INTO v_conn FROM webhook_connection WHERE id = p_connection_id;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_conn.updated_at IS DISTINCT FROM p_version THEN RETURN jsonb_build_object('code', 'stale'); END IF;

  -- A redelivery of a stored event answers at once, without touching the operation. This read
  -- is only a shortcut: the unique index below is what guarantees one event per provider id.
  SELECT id INTO v_id FROM webhook_event WHERE connection_id = p_connection_id AND provider_event_id = p_provider_event_id;
  IF FOUND THEN RETURN jsonb_build_object('code', 'duplicate', 'eventId', v_id); END IF;

  v_value := p_payload #>> string_to_array(v_conn.correlation_path, '.');
  v_outcome := v_conn.outcomes ->> p_event_type;
  IF v_outcome NOT IN ('succeeded', 'failed') THEN v_outcome := NULL; END IF;
  IF v_value IS NOT NULL AND length(v_value) BETWEEN 1 AND 500 THEN
    -- An operation id or a downstream key of the connection's tenant; nobody else's.
    SELECT * INTO v_op FROM operation
    WHERE tenant_id = v_conn.tenant_id AND (id = v_value OR downstream_key = v_value)
    ORDER BY (id = v_value) DESC LIMIT 1 FOR UPDATE;
  END IF;

  v_status := CASE
    WHEN v_op.id IS NULL THEN 'unmatched'
    WHEN v_outcome IS NULL THEN 'unmapped'
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

  IF v_status = 'matched' AND v_op.state IN ('processing', 'unknown') THEN
    PERFORM tollgate_webhook_settle(v_op, v_outcome, v_actor, 'resolved by webhook ' || p_event_id,
      format('%s event %s (%s)', v_conn.name, p_provider_event_id, p_event_type));
  ELSIF v_status = 'contradicting' THEN
    PERFORM tollgate_webhook_flag(v_op, p_event_id, p_event_type, v_outcome, v_actor);
  END IF;
  RETURN jsonb_build_object('code', 'stored', 'eventId', p_event_id, 'status', v_status, 'operationId', v_op.id,
    'tenantId', v_conn.tenant_id);
END $$;

CREATE FUNCTION tollgate_webhook_event_audit(e webhook_event, p_actor text, p_action text, p_before jsonb, p_after jsonb, p_reason text)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (e.tenant_id, p_actor, p_action, 'webhook_event', e.id, p_before, p_after, p_reason)
$$;

-- The inbox: an operator matches an unmatched, unmapped or contradicting event to an operation
-- of the tenant with an outcome. A processing or unknown operation is settled by it; a settled
-- one is only linked, and only when it agrees. Returns { code, op, event }.
CREATE FUNCTION tollgate_webhook_match(p_tenant_id text, p_event_id text, p_op_id text, p_outcome text, p_reason text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_event webhook_event;
  v_op operation;
  v_conn_name text;
  v_note text;
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
    jsonb_build_object('status', 'matched', 'operationId', v_op.id, 'outcome', p_outcome, 'operationState', v_op.state), v_note);
  RETURN jsonb_build_object('code', 'matched', 'op', tollgate_op_view(v_op), 'eventId', v_event.id);
END $$;

-- The inbox: an operator decides an event needs no action. The reason is required (the API
-- checks it; so does this).
CREATE FUNCTION tollgate_webhook_ignore(p_tenant_id text, p_event_id text, p_reason text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_event webhook_event;
BEGIN
  IF nullif(btrim(p_reason), '') IS NULL THEN RAISE EXCEPTION 'tollgate_webhook_ignore needs a reason'; END IF;
  SELECT * INTO v_event FROM webhook_event WHERE id = p_event_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_event.status NOT IN ('unmatched', 'unmapped', 'contradicting') THEN
    RETURN jsonb_build_object('code', 'event-decided', 'status', v_event.status);
  END IF;
  UPDATE webhook_event SET status = 'ignored', decided_by = p_actor, decided_at = now(), reason = p_reason WHERE id = v_event.id;
  PERFORM tollgate_webhook_event_audit(v_event, p_actor, 'webhook_event.ignored',
    jsonb_build_object('status', v_event.status, 'operationId', v_event.operation_id), jsonb_build_object('status', 'ignored'), p_reason);
  RETURN jsonb_build_object('code', 'ignored', 'eventId', v_event.id);
END $$;
