-- From a review of the protocol's SQL (2026-12-03): whether a webhook about an operation's only
-- side effect may settle the whole operation depends on whether an attempt may still start
-- provider calls, and a lapsed lease counts when the next claim will take it over (takeover
-- `deduplicated`, attempts left). The webhook counted the attempts left against the tool's current
-- `maxAttempts`; the claim and the lease reaper count them against the operation's own
-- `max_attempts`, copied from the tool when the operation was made (a policy change does not
-- reach operations already running). After an admin lowered the limit, the event settled an
-- operation the next claim would have resumed (its other calls never made); after one raised it,
-- the event settled nothing and the reaper then made the operation unknown, for an operator to
-- settle by hand what the event had said.
--
-- tollgate_webhook_ingest (from 20261202181000_webhook_evidence_rules) is re-declared whole; only
-- the part marked [changed] differs. Earlier [changed] marks are taken out.

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
  v_unknown_cause text;
  v_path text[];
  v_echo boolean := false;
  v_failed_attempt int;
  v_said_succeeded boolean := false;
  v_echo_outcome attempt_outcome; -- what the echoed attempt reported (or how it ended)
  v_calls_may_start boolean; -- an attempt holds a live lease and may still start provider calls
BEGIN
  SELECT * INTO v_conn FROM webhook_connection WHERE id = p_connection_id;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_conn.updated_at IS DISTINCT FROM p_version THEN RETURN jsonb_build_object('code', 'stale'); END IF;

  -- A redelivery of a stored event answers at once, without touching the operation. This read
  -- is only a shortcut: the unique index below is what guarantees one event per provider id.
  SELECT id INTO v_id FROM webhook_event WHERE connection_id = p_connection_id AND provider_event_id = p_provider_event_id;
  IF FOUND THEN RETURN jsonb_build_object('code', 'duplicate', 'eventId', v_id); END IF;

  -- Only a string or a number at the path is a correlation value, and only up to 500
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
  IF v_value IS NOT NULL THEN
    -- An operation id or a downstream key of the connection's tenant; nobody else's.
    -- Two lookups, each by its own unique index: the id first (it wins over a downstream
    -- key of the same text, as the ORDER BY did), then the downstream key. The one query with
    -- "id = v OR downstream_key = v" was planned from stale statistics as a scan of the tenant's
    -- operations filtered row by row (operation_tenant_id_updated_at_idx): 0.2 ms at 300
    -- operations, growing with every one, in the statement an agent's retry waits behind.
    SELECT * INTO v_op FROM operation WHERE tenant_id = v_conn.tenant_id AND id = v_value FOR UPDATE;
    IF v_op.id IS NULL THEN
      SELECT * INTO v_op FROM operation WHERE tenant_id = v_conn.tenant_id AND downstream_key = v_value FOR UPDATE;
    END IF;
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
  -- An attempt may still start calls: the lease is live, or it ran out and the next
  -- claim takes over (takeover deduplicated, attempts left: the reaper leaves it for that claim).
  -- [changed] Attempts left by the operation's own limit, copied from the tool when it was made, as
  -- the claim and the reaper count them: the tool's current one (an admin may have lowered or raised
  -- it since) settled an operation a takeover was about to resume, or left one the reaper then
  -- made unknown.
  v_calls_may_start := coalesce(v_op.state = 'processing' AND (v_op.lease_expires_at > now()
    OR (v_op.attempt_count < v_op.max_attempts AND EXISTS (SELECT 1 FROM tool t
      WHERE t.tenant_id = v_op.tenant_id AND t.name = v_op.tool AND t.takeover = 'deduplicated'))), false);
  -- `failed` promises every retry that nothing happened. An event that names the
  -- operation itself (not one of its side effects) and says failed, about an operation that
  -- recorded side effects the providers may have acted on (sent, unknown, confirmed), does not
  -- settle it: as an agent's failed is turned into unknown then (tollgate_complete), the event is
  -- contradicting, the operation flagged, and an operator decides from the inbox (API review).
  IF v_effect.id IS NULL AND v_op.id IS NOT NULL AND v_outcome = 'failed' AND v_op.state IN ('processing', 'unknown') THEN
    SELECT string_agg(format('%s: %s', name, state), ', ' ORDER BY name) INTO v_effects
    FROM side_effect WHERE tenant_id = v_conn.tenant_id AND operation_id = v_op.id AND state IN ('sent', 'unknown', 'confirmed');
  END IF;
  -- A `failed` event after a retry started: an earlier attempt reported failed
  -- (retryable) and every attempt calls the provider with the same downstream key, so the event
  -- may be the provider's word on that earlier call, already known. Settling on it told every
  -- replay "failed, nothing happened" while the running attempt might still succeed (or, when the
  -- later attempt's outcome became unknown, answered a doubt about that attempt with news of an
  -- earlier one). It is matched (it agrees with what is known) and settles nothing, nor the side
  -- effect it names: the running attempt reports its own outcome, an unknown one waits for an
  -- operator. Any earlier attempt, not only the one before: a takeover may have come between.
  -- (A `succeeded` event settles as before: an effect happened, whichever call made it.)
  -- Not only once a retry started: while the retry waits out its backoff (pending) the
  -- event finalised the side effect it names as failed, the row every attempt shares, and the
  -- retry's own reports of it were refused or flagged; and an operation made unknown because its
  -- failed (retryable) attempt was contradicted (a provider's "succeeded", the attempt's own later
  -- success) was settled as failed by this echo of the known failure. Any attempt that reported
  -- failed (retryable) counts, the latest one too (a running attempt has no outcome yet).
  -- Not only an attempt that reported failed (retryable): any earlier attempt may have
  -- called the provider with the same key. One whose lease ran out, that was taken over, or that
  -- reported unknown (or failed, turned unknown) before a retry started, or before an operator
  -- sent the operation back to retry (pending, the latest attempt ended so): its `failed` was
  -- matched, the shared side effect set failed under the retry (its `confirmed` refused, its
  -- success flagged), and a retry running under a live lease was settled failed. The latest
  -- attempt's own unknown ending is what an event answers (it settles an unknown operation), so
  -- it counts only once the operation moved past it. An attempt that reported failed
  -- (retryable) is named first: it is the failure the event most likely repeats.
  IF v_op.id IS NOT NULL AND v_outcome = 'failed' AND v_op.state IN ('processing', 'unknown', 'pending') AND NOT tollgate_not_run(v_op) THEN
    SELECT number, outcome INTO v_failed_attempt, v_echo_outcome FROM attempt
    WHERE tenant_id = v_conn.tenant_id AND operation_id = v_op.id
      AND (outcome = 'retryable_failure' OR (outcome IN ('unknown', 'lease_lost', 'taken_over', 'failed')
        AND (number < v_op.attempt_count OR v_op.state = 'pending')))
    ORDER BY outcome = 'retryable_failure' DESC, number DESC LIMIT 1;
    v_echo := v_failed_attempt IS NOT NULL;
  END IF;
  -- A `failed` event about an operation a provider event already said succeeded about
  -- (unknown since, for an operator): a later "failed" cannot undo an effect, and webhooks arrive
  -- in any order. It contradicts, waits in the inbox and flags the operation; it settles nothing.
  IF v_op.id IS NOT NULL AND v_outcome = 'failed' AND v_op.state = 'unknown' AND NOT v_echo THEN
    v_said_succeeded := EXISTS (SELECT 1 FROM webhook_event e WHERE e.tenant_id = v_conn.tenant_id AND e.operation_id = v_op.id
      AND e.outcome = 'succeeded');
  END IF;

  -- Named by a side effect's key, the event is evidence about that one provider call: it may
  -- contradict the effect's own final state; it settles the operation only when that call is
  -- the operation's only side effect (one charge of two calls says nothing of the other)
  -- and no attempt can still start calls: the operation is unknown, or processing under a lease
  -- that ran out. Under a live lease the charge was the only effect on record because the tool
  -- records each intent right before its call: settling there made the email's intent 409
  -- already-resolved, the email was never sent, and every replay said succeeded. The event
  -- confirms (or fails) its call, and the agent's complete decides. An event naming the
  -- operation itself (its id, its downstream key) still settles it under a live lease: the
  -- contract's "webhook before complete wins". Against
  -- a settled operation it is judged like any event: a charge that succeeded under an operation
  -- that failed (or the reverse) is contradicting, whatever else the operation called.
  v_status := CASE
    WHEN v_op.id IS NULL THEN 'unmatched'
    WHEN v_outcome IS NULL THEN 'unmapped'
    WHEN tollgate_not_run(v_op) THEN 'contradicting'
    WHEN v_effect.state IN ('confirmed', 'failed') AND v_effect.state <> v_effect_state THEN 'contradicting'
    WHEN v_effects IS NOT NULL THEN 'contradicting'
    WHEN v_said_succeeded THEN 'contradicting'
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

  IF v_status = 'matched' AND v_effect.id IS NOT NULL AND v_effect.state NOT IN ('confirmed', 'failed') AND NOT v_echo THEN
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
  -- An operation that has not run (awaiting approval, or approved and not yet claimed):
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
    v_unknown_cause := 'webhook-before-run';
  ELSIF v_status = 'contradicting' AND tollgate_not_run(v_op) THEN
    UPDATE operation SET flagged_at = now(), updated_at = now(),
      -- rejected (at approval, or its approval expired): it never ran.
      flag_reason = format('webhook %s (%s) says %s, but the operation %s', p_event_id, p_event_type, v_outcome,
        CASE v_op.state WHEN 'awaiting_approval' THEN 'has not run yet (awaiting approval)' WHEN 'rejected' THEN 'never ran (rejected)'
          ELSE 'has not run yet (approved, not yet claimed)' END)
    WHERE id = v_op.id;
    PERFORM tollgate_audit(v_op.tenant_id, v_actor, 'operation.webhook_conflict', v_op.id,
      jsonb_build_object('state', v_op.state, 'attempts', v_op.attempt_count),
      jsonb_build_object('eventId', p_event_id, 'eventType', p_event_type, 'reportedOutcome', v_outcome),
      CASE WHEN v_op.state = 'rejected' THEN 'a provider webhook about an operation that was rejected and never ran; not applied'
        ELSE 'a provider webhook about an operation that has not run yet; not applied' END);
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
  ELSIF v_status = 'matched' AND v_echo THEN
    -- Kept on the trace with why it settled nothing.
    PERFORM tollgate_audit(v_op.tenant_id, v_actor, 'operation.webhook_not_applied', v_op.id,
      jsonb_build_object('state', v_op.state, 'attempt', v_op.attempt_count),
      -- earlierOutcome: how the attempt the event may be about ended.
      jsonb_build_object('eventId', p_event_id, 'eventType', p_event_type, 'reportedOutcome', v_outcome,
        'failedAttempt', v_failed_attempt, 'earlierOutcome', v_echo_outcome, 'sideEffect', v_effect.name),
      CASE WHEN v_echo_outcome <> 'retryable_failure' -- an attempt that did not report failed (retryable)
        THEN format('provider event %s (%s) says failed; attempt %s (%s) may have called the provider with the same key, so it may be about that call%s: not applied',
          p_provider_event_id, p_event_type, v_failed_attempt,
          CASE v_echo_outcome WHEN 'lease_lost' THEN 'its lease ran out' WHEN 'taken_over' THEN 'taken over'
            WHEN 'unknown' THEN 'reported unknown' ELSE 'reported failed' END
            || CASE WHEN v_op.state = 'pending' AND v_op.resolution ->> 'outcome' = 'retry' THEN ', then an operator resolved retry' ELSE '' END,
          CASE WHEN v_failed_attempt < v_op.attempt_count THEN format(', not attempt %s (%s)', v_op.attempt_count, v_op.state)
            ELSE format('; the operation stays %s', v_op.state) END)
        WHEN v_failed_attempt < v_op.attempt_count
        THEN format('provider event %s (%s) says failed, as attempt %s reported (retryable); it may be about that call, not attempt %s (%s): not applied',
          p_provider_event_id, p_event_type, v_failed_attempt, v_op.attempt_count, v_op.state)
        ELSE format('provider event %s (%s) says failed, as attempt %s reported (retryable), already known; the operation stays %s: not applied',
          p_provider_event_id, p_event_type, v_failed_attempt, v_op.state) END);
  ELSIF v_status = 'matched' AND v_op.state IN ('processing', 'unknown') AND v_alone
    AND (v_effect.id IS NULL OR NOT v_calls_may_start) THEN -- see "Named by a side effect's key" above
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
    'tenantId', v_conn.tenant_id, 'becameUnknown', v_unknown,
    'unknownCause', CASE WHEN v_unknown THEN coalesce(v_unknown_cause, 'webhook-contradicts-retry') END);
END $$;
