-- Issue 7: side effects, the transactional outbox, delivery scheduling, the lease reaper and
-- reconciliation probes. Everything that enqueues a job calls graphile_worker.add_job() inside
-- the transaction that makes the change, so a crash can never separate the two. The
-- graphile_worker schema is installed by lib/db/migrate.ts right after these migrations; the
-- functions below that touch it are plpgsql, whose bodies are resolved only when they run.

-- ---------------------------------------------------------------------------------------------
-- Side effects: PUT /api/v1/operations/{id}/side-effects/{name}

-- Forward order of a side effect's states. unknown sits below confirmed/failed: an executor
-- that did not know may learn later; one that knew cannot unlearn it.
CREATE FUNCTION tollgate_side_effect_rank(p_state side_effect_state) RETURNS int LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_state WHEN 'intended' THEN 0 WHEN 'sent' THEN 1 WHEN 'unknown' THEN 2 ELSE 3 END
$$;

CREATE FUNCTION tollgate_side_effect_view(e side_effect) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('name', e.name, 'provider', e.provider, 'downstreamKey', e.downstream_key, 'state', e.state,
    'providerRequestId', e.provider_request_id, 'providerResourceId', e.provider_resource_id, 'attempt', e.attempt_number,
    'createdAt', e.created_at, 'updatedAt', e.updated_at)
$$;

-- One round trip, fenced like complete: the operation must be processing under this token.
-- The operation row is share-locked, so a complete (which locks it for update) cannot slip in
-- between the fence check and the write. Returns { code: created|updated|unchanged|<problem> }.
CREATE FUNCTION tollgate_record_side_effect(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text,
  p_token bigint, p_name text, p_provider text, p_state text, p_request_id text, p_resource_id text,
  p_downstream_key text, p_new_id text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_old side_effect;
  v_new side_effect;
  v_state side_effect_state := p_state::side_effect_state;
  v_moves boolean;
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR SHARE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  IF v_op.state <> 'processing' OR v_op.fencing_token IS DISTINCT FROM p_token THEN
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
  END IF;

  FOR i IN 1..2 LOOP
    SELECT * INTO v_old FROM side_effect WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND name = p_name FOR UPDATE;
    EXIT WHEN FOUND;
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

-- ---------------------------------------------------------------------------------------------
-- The outbox. Triggers write events in the transaction of the change, whoever the writer is
-- (protocol functions, approvals, webhooks, the worker, an operator), and enqueue one delivery
-- job per subscriber in the same transaction.

-- The tenant's active subscriptions that want this event type (an index scan on tenant_id).
CREATE FUNCTION tollgate_event_subscribers(p_tenant_id text, p_type text) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT array_agg(id ORDER BY id) FROM event_subscription
  WHERE tenant_id = p_tenant_id AND disabled_at IS NULL AND p_type = ANY (events)
$$;

-- One outbox event and one delivery (plus its job) per subscriber. The event id is the
-- Standard Webhooks message id, the same on every delivery and redelivery.
CREATE FUNCTION tollgate_emit_event(p_tenant_id text, p_type text, p_data jsonb, p_subscribers text[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_event_id text := 'msg_' || replace(gen_random_uuid()::text, '-', '');
  v_delivery_id text;
  v_sub text;
BEGIN
  IF p_subscribers IS NULL OR cardinality(p_subscribers) = 0 THEN RETURN NULL; END IF;
  INSERT INTO outbox_event (id, tenant_id, type, payload) VALUES (v_event_id, p_tenant_id, p_type, p_data);
  FOREACH v_sub IN ARRAY p_subscribers LOOP
    v_delivery_id := 'dlv_' || replace(gen_random_uuid()::text, '-', '');
    INSERT INTO event_delivery (id, tenant_id, event_id, subscription_id, next_attempt_at)
    VALUES (v_delivery_id, p_tenant_id, v_event_id, v_sub, now());
    PERFORM tollgate_enqueue_delivery(v_delivery_id, now());
  END LOOP;
  RETURN v_event_id;
END $$;

-- One job per delivery: the job key makes a second enqueue replace the waiting job, not add one.
CREATE FUNCTION tollgate_enqueue_delivery(p_delivery_id text, p_run_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM graphile_worker.add_job('deliver-event', json_build_object('deliveryId', p_delivery_id),
    run_at => p_run_at, job_key => 'delivery:' || p_delivery_id, max_attempts => 25);
END $$;

-- operation.succeeded / failed / unknown on entering that state; operation.resolved whenever a
-- resolution is written (operator, webhook or probe). A resolution to succeeded emits both.
CREATE FUNCTION tollgate_operation_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_subs text[];
  v_view jsonb;
BEGIN
  IF NEW.state IS DISTINCT FROM OLD.state AND NEW.state IN ('succeeded', 'failed', 'unknown') THEN
    v_subs := tollgate_event_subscribers(NEW.tenant_id, 'operation.' || NEW.state);
    IF v_subs IS NOT NULL THEN
      v_view := tollgate_op_view(NEW);
      PERFORM tollgate_emit_event(NEW.tenant_id, 'operation.' || NEW.state,
        jsonb_build_object('operation', v_view, 'previousState', OLD.state), v_subs);
    END IF;
  END IF;
  IF NEW.resolution IS NOT NULL AND NEW.resolution IS DISTINCT FROM OLD.resolution THEN
    v_subs := tollgate_event_subscribers(NEW.tenant_id, 'operation.resolved');
    IF v_subs IS NOT NULL THEN
      PERFORM tollgate_emit_event(NEW.tenant_id, 'operation.resolved',
        jsonb_build_object('operation', coalesce(v_view, tollgate_op_view(NEW)), 'previousState', OLD.state,
          'resolution', NEW.resolution), v_subs);
    END IF;
  END IF;
  RETURN NULL;
END $$;

-- The WHEN clause is evaluated without entering plpgsql, so claims, heartbeats, replays and
-- counters (which change neither) pay nothing.
CREATE TRIGGER operation_events AFTER UPDATE ON operation FOR EACH ROW
  WHEN ((NEW.state IS DISTINCT FROM OLD.state AND NEW.state IN ('succeeded', 'failed', 'unknown'))
     OR (NEW.resolution IS NOT NULL AND NEW.resolution IS DISTINCT FROM OLD.resolution))
  EXECUTE FUNCTION tollgate_operation_events();

-- approval.requested on insert; approval.decided when a pending approval is approved,
-- rejected or expires.
CREATE FUNCTION tollgate_approval_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_type text := CASE WHEN TG_OP = 'INSERT' THEN 'approval.requested' ELSE 'approval.decided' END;
  v_subs text[] := tollgate_event_subscribers(NEW.tenant_id, v_type);
  v_op operation;
BEGIN
  IF v_subs IS NULL THEN RETURN NULL; END IF;
  SELECT * INTO v_op FROM operation WHERE id = NEW.operation_id;
  PERFORM tollgate_emit_event(NEW.tenant_id, v_type,
    jsonb_build_object('approval', tollgate_approval_view(NEW, v_op), 'operation', tollgate_op_view(v_op)), v_subs);
  RETURN NULL;
END $$;

CREATE TRIGGER approval_requested_events AFTER INSERT ON approval FOR EACH ROW
  EXECUTE FUNCTION tollgate_approval_events();
CREATE TRIGGER approval_decided_events AFTER UPDATE OF state ON approval FOR EACH ROW
  WHEN (OLD.state = 'pending' AND NEW.state <> 'pending')
  EXECUTE FUNCTION tollgate_approval_events();

-- webhook.unmatched: a verified provider event that settled nothing and needs an operator
-- (no operation matched, its type maps to no outcome, or it contradicts a settled outcome).
CREATE FUNCTION tollgate_webhook_event_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_subs text[] := tollgate_event_subscribers(NEW.tenant_id, 'webhook.unmatched');
  v_connection text;
BEGIN
  IF v_subs IS NULL THEN RETURN NULL; END IF;
  SELECT name INTO v_connection FROM webhook_connection WHERE id = NEW.connection_id;
  PERFORM tollgate_emit_event(NEW.tenant_id, 'webhook.unmatched', jsonb_build_object('webhookEvent', jsonb_build_object(
    'id', NEW.id, 'connection', v_connection, 'providerEventId', NEW.provider_event_id, 'eventType', NEW.event_type,
    'status', NEW.status, 'outcome', NEW.outcome, 'correlationValue', NEW.correlation_value,
    'operationId', NEW.operation_id, 'receivedAt', NEW.received_at)), v_subs);
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_event_unmatched_on_insert AFTER INSERT ON webhook_event FOR EACH ROW
  WHEN (NEW.status IN ('unmatched', 'unmapped', 'contradicting'))
  EXECUTE FUNCTION tollgate_webhook_event_events();
CREATE TRIGGER webhook_event_unmatched_on_update AFTER UPDATE OF status ON webhook_event FOR EACH ROW
  WHEN (NEW.status IN ('unmatched', 'unmapped', 'contradicting') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION tollgate_webhook_event_events();

-- ---------------------------------------------------------------------------------------------
-- Delivery bookkeeping (called by the worker and the console)

-- A try failed: count it and schedule the next one (exponential backoff, equal jitter: half the
-- delay fixed, half random, so retries of many deliveries spread out but never bunch at zero),
-- or mark the delivery dead when the next try would fall outside its retry window.
CREATE FUNCTION tollgate_delivery_failed(p_id text, p_status int, p_error text, p_base_ms int, p_cap_ms int,
  p_window_seconds int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_d event_delivery;
  v_delay_ms double precision;
  v_next timestamptz;
BEGIN
  SELECT * INTO v_d FROM event_delivery WHERE id = p_id FOR UPDATE;
  IF NOT FOUND OR v_d.state <> 'pending' THEN RETURN jsonb_build_object('code', 'not-pending'); END IF;
  v_delay_ms := least(p_cap_ms::double precision, p_base_ms * power(2::double precision, least(v_d.attempts, 40)));
  v_delay_ms := v_delay_ms / 2 + random() * v_delay_ms / 2;
  v_next := now() + make_interval(secs => v_delay_ms / 1000.0);
  IF v_next > v_d.window_started_at + make_interval(secs => p_window_seconds) THEN
    UPDATE event_delivery SET state = 'dead', attempts = attempts + 1, last_attempt_at = now(), last_status = p_status,
      last_error = left(p_error, 2000), next_attempt_at = NULL, dead_at = now()
    WHERE id = p_id;
    RETURN jsonb_build_object('code', 'dead');
  END IF;
  UPDATE event_delivery SET attempts = attempts + 1, last_attempt_at = now(), last_status = p_status,
    last_error = left(p_error, 2000), next_attempt_at = v_next
  WHERE id = p_id;
  PERFORM tollgate_enqueue_delivery(p_id, v_next);
  RETURN jsonb_build_object('code', 'retry', 'nextAttemptAt', v_next);
END $$;

-- The console's redeliver (dead or delivered deliveries): back to pending with a fresh retry
-- window, enqueued in the same transaction, audited.
CREATE FUNCTION tollgate_redeliver(p_tenant_id text, p_delivery_id text, p_actor text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_d event_delivery;
BEGIN
  SELECT * INTO v_d FROM event_delivery WHERE id = p_delivery_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_d.state = 'pending' THEN RETURN jsonb_build_object('code', 'invalid-state', 'state', v_d.state); END IF;
  UPDATE event_delivery SET state = 'pending', attempts = 0, window_started_at = now(), next_attempt_at = now(),
    dead_at = NULL, delivered_at = NULL
  WHERE id = p_delivery_id;
  PERFORM tollgate_enqueue_delivery(p_delivery_id, now());
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (p_tenant_id, p_actor, 'event_delivery.redelivered', 'event_delivery', p_delivery_id,
    jsonb_build_object('state', v_d.state, 'attempts', v_d.attempts, 'eventId', v_d.event_id, 'lastStatus', v_d.last_status),
    jsonb_build_object('state', 'pending', 'eventId', v_d.event_id), NULL);
  RETURN jsonb_build_object('code', 'redelivered', 'previousState', v_d.state);
END $$;

-- Pending deliveries overdue with no live job (the queue was emptied by hand, or the job failed
-- for good on errors of our own): enqueue them again (add_job revives a failed job of the same
-- key). A job locked by a dead worker is not "missing"; tollgate_release_abandoned_jobs frees those.
CREATE FUNCTION tollgate_requeue_stalled_deliveries(p_overdue_seconds int, p_limit int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_id text;
  v_n int := 0;
BEGIN
  FOR v_id IN
    SELECT d.id FROM event_delivery d
    WHERE d.state = 'pending' AND d.next_attempt_at < now() - make_interval(secs => p_overdue_seconds)
      AND NOT EXISTS (SELECT 1 FROM graphile_worker.jobs j WHERE j.key = 'delivery:' || d.id AND j.attempts < j.max_attempts)
    ORDER BY d.next_attempt_at LIMIT p_limit
    FOR UPDATE OF d SKIP LOCKED
  LOOP
    PERFORM tollgate_enqueue_delivery(v_id, now());
    v_n := v_n + 1;
  END LOOP;
  RETURN v_n;
END $$;

-- Jobs locked by a worker process that died (SIGKILL, power loss) would stay locked for
-- graphile-worker's 4 hours. Every Tollgate worker holds a session advisory lock named after
-- its pool id for as long as it lives; PostgreSQL drops it with the dead process's connection.
-- A lock we can take is a dead owner: its jobs are unlocked and run again (at least once).
-- The age guard covers the instant between a pool starting and taking its lock.
CREATE FUNCTION tollgate_release_abandoned_jobs(p_older_than_seconds int) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_dead text[];
BEGIN
  SELECT array_agg(w.locked_by) INTO v_dead FROM (
    SELECT DISTINCT locked_by FROM graphile_worker.jobs
    WHERE locked_by IS NOT NULL AND locked_at < now() - make_interval(secs => p_older_than_seconds)
  ) w
  WHERE pg_try_advisory_xact_lock(tollgate_worker_lock_class(), hashtext(w.locked_by));
  IF v_dead IS NOT NULL THEN PERFORM graphile_worker.force_unlock_workers(v_dead); END IF;
  RETURN coalesce(v_dead, '{}');
END $$;

-- "Wrkr": the advisory-lock class of worker liveness locks (two-int keys; migrations use a bigint key).
CREATE FUNCTION tollgate_worker_lock_class() RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 1467116402 $$;

-- ---------------------------------------------------------------------------------------------
-- The lease reaper: an expired lease that no attempt may take over becomes unknown now, even
-- if no agent ever comes back to claim it (tollgate_claim does the same lazily). A lease whose
-- tool allows a takeover with attempts left is left for that takeover.
CREATE FUNCTION tollgate_reap_expired_leases(p_limit int, p_grace_seconds int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_n int := 0;
BEGIN
  FOR v_op IN
    SELECT o.* FROM operation o JOIN tool t ON t.tenant_id = o.tenant_id AND t.name = o.tool
    WHERE o.state = 'processing' AND o.lease_expires_at < now() - make_interval(secs => p_grace_seconds)
      AND NOT (t.takeover = 'deduplicated' AND o.attempt_count < o.max_attempts)
    ORDER BY o.lease_expires_at LIMIT p_limit
    FOR UPDATE OF o SKIP LOCKED
  LOOP
    UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
      error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
    WHERE tenant_id = v_op.tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
    UPDATE operation SET state = 'unknown', lease_expires_at = NULL, updated_at = now(),
      error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
    WHERE id = v_op.id;
    PERFORM tollgate_audit(v_op.tenant_id, 'system:lease-reaper', 'operation.unknown', v_op.id,
      jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count),
      jsonb_build_object('state', 'unknown'),
      'lease expired with no report and the tool allows no takeover: the call may or may not have taken effect');
    v_n := v_n + 1;
  END LOOP;
  RETURN v_n;
END $$;

-- ---------------------------------------------------------------------------------------------
-- Reconciliation probes

-- Takes up to p_limit unknown operations whose tool has a probe and whose next probe is due,
-- and books the probe (count + next time, bounded exponential backoff) before it runs, so two
-- workers never probe the same operation at once and a crash mid-probe only delays the next one.
CREATE FUNCTION tollgate_take_due_probes(p_limit int, p_base_seconds int, p_cap_seconds int, p_default_max int)
RETURNS TABLE (operation_id text, tenant_id text, tool text, downstream_key text, resource_id text, probe jsonb, probe_number int)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH due AS (
    SELECT o.id, t.probe AS tool_probe FROM operation o JOIN tool t ON t.tenant_id = o.tenant_id AND t.name = o.tool
    WHERE o.state = 'unknown' AND t.probe IS NOT NULL
      AND o.probe_count < coalesce((t.probe ->> 'maxProbes')::int, p_default_max)
      AND (o.next_probe_at IS NULL OR o.next_probe_at <= now())
    ORDER BY o.next_probe_at NULLS FIRST LIMIT p_limit
    FOR UPDATE OF o SKIP LOCKED
  )
  UPDATE operation o SET probe_count = o.probe_count + 1,
    next_probe_at = now() + make_interval(secs => least(p_cap_seconds::double precision,
      p_base_seconds * power(2::double precision, least(o.probe_count, 30))))
  FROM due WHERE o.id = due.id
  RETURNING o.id, o.tenant_id, o.tool, o.downstream_key,
    coalesce(o.result ->> 'resourceId',
      (SELECT a.provider ->> 'resourceId' FROM attempt a WHERE a.tenant_id = o.tenant_id AND a.operation_id = o.id
        AND a.provider ->> 'resourceId' IS NOT NULL ORDER BY a.number DESC LIMIT 1),
      (SELECT e.provider_resource_id FROM side_effect e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id
        AND e.provider_resource_id IS NOT NULL ORDER BY e.updated_at DESC LIMIT 1)),
    due.tool_probe, o.probe_count;
END $$;

-- Records what a probe found (audited on the operation) and, when conclusive, resolves the
-- operation through tollgate_resolve (via 'probe'), in one transaction.
CREATE FUNCTION tollgate_record_probe(p_tenant_id text, p_op_id text, p_probe_number int, p_verdict text, p_status int,
  p_summary text, p_resource_id text, p_evidence text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_resolved jsonb;
BEGIN
  IF p_verdict IN ('succeeded', 'failed') THEN
    v_resolved := tollgate_resolve(p_tenant_id, p_op_id, p_verdict, p_summary, p_resource_id, p_evidence, 'system:probe', 'probe');
  END IF;
  PERFORM tollgate_audit(p_tenant_id, 'system:probe', 'operation.probed', p_op_id, NULL,
    jsonb_build_object('probe', p_probe_number, 'verdict', p_verdict, 'status', p_status,
      'resolved', coalesce(v_resolved ->> 'code', 'no')), p_summary);
  RETURN jsonb_build_object('code', coalesce(v_resolved ->> 'code', 'recorded'));
END $$;
