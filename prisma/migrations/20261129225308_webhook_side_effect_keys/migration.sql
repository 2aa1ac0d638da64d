-- Webhooks, second step (issue 5): a correlation value may also be a side effect's own
-- downstream key (the key a provider saw for that call; issue 7 added them), and a webhook that
-- settles an operation as succeeded carries the provider resource id an attempt reported.
-- Same signatures as in 20261129223221_webhook_ingest: replaced, not changed.

CREATE OR REPLACE FUNCTION tollgate_webhook_settle(v_op operation, p_outcome text, p_actor text, p_reason text, p_evidence text)
RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_tool tool;
  v_new operation;
  v_live boolean := v_op.state = 'processing' AND v_op.lease_expires_at > now();
  v_resource_id text;
BEGIN
  IF v_op.state NOT IN ('processing', 'unknown') OR p_outcome NOT IN ('succeeded', 'failed') THEN
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
    completed_at = now(),
    result_expires_at = now() + make_interval(hours => coalesce(v_tool.result_retention_hours, 24))
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(v_op.tenant_id, p_actor, 'operation.resolved', v_op.id,
    jsonb_build_object('state', v_op.state, 'leaseLive', v_live),
    jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', 'webhook', 'resourceId', v_new.result ->> 'resourceId', 'evidence', p_evidence),
    p_reason);
  RETURN v_new;
END $$;

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
    IF v_op.id IS NULL THEN
      -- A side effect's own downstream key (the one its provider saw) names its operation too.
      SELECT o.* INTO v_op FROM side_effect s JOIN operation o ON o.id = s.operation_id AND o.tenant_id = s.tenant_id
      WHERE s.tenant_id = v_conn.tenant_id AND s.downstream_key = v_value
      FOR UPDATE OF o;
    END IF;
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
