-- A superseded attempt's late "succeeded" while a later attempt waits to retry (review,
-- 2026-12-02): attempt 1 failed (retryable), attempt 2 ran and failed (retryable) too, and then
-- attempt 1 said it had succeeded after all. That was flagged, but the claim ignores flags: the
-- third attempt ran the tool again. Now the operation becomes unknown, as when the attempt that
-- holds it says so, and as a side effect's late `confirmed` does since 20261202110000. And the
-- report that made an operation unknown, repeated, no longer writes a second audit row.
--
-- tollgate_complete (from 20261201220000_success_after_failed_side_effect) re-declared whole
-- with the same signature; only the parts marked [changed] differ from it.

CREATE OR REPLACE FUNCTION tollgate_complete(p_tenant_id text, p_api_key_id text, p_allowed_tools text[], p_op_id text, p_token bigint,
  p_outcome text, p_retryable boolean, p_result jsonb, p_error jsonb, p_provider jsonb, p_digest text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_att attempt;
  v_tool tool;
  v_new operation;
  v_state operation_state;
  v_att_outcome attempt_outcome;
  v_delay_ms double precision;
  v_effects text;
  v_fill boolean;
  v_by_operator boolean;
  v_effect_failed text;
  v_superseded boolean; -- [changed]
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT v_op.tool = ANY (p_allowed_tools) THEN RETURN jsonb_build_object('code', 'forbidden'); END IF;
  SELECT * INTO v_att FROM attempt WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = p_token;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op)); END IF;

  IF v_att.complete_digest IS NOT NULL THEN
    IF v_att.complete_digest = p_digest THEN RETURN jsonb_build_object('code', 'repeated', 'op', tollgate_op_view(v_op)); END IF;
    -- The same report that contradicted a settled operation, repeated: the same answer,
    -- without flagging the operation or auditing it again.
    IF v_att.complete_digest = 'conflict:' || p_digest THEN
      RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_op),
        'detail', format('The operation was already resolved as %s', v_op.state));
    END IF;
    -- A different report from an attempt that already reported. While the operation is
    -- still what that first report settled (terminal, this attempt's token), it contradicts it:
    -- 409 already-resolved, the operation flagged and the report audited (once per distinct
    -- report), as when a webhook or an operator settled first. Otherwise (its failure sent the
    -- operation back to pending and perhaps a newer attempt runs, or it reported unknown) it is a
    -- late report like any other, below: 409 lease-lost and kept as evidence. It was answered
    -- already-resolved and recorded nowhere, although "failed, retryable" then "succeeded" is the
    -- sign that a retry may act a second time (API review).
    -- Only while nobody resolved it since: once an operator or a webhook settled it (an
    -- attempt that reported unknown, say), the report is judged against that resolution below,
    -- like any report on a settled operation (200 if it agrees; code review).
    -- A resolution from before this attempt started (an operator's retry that let it
    -- run) is not one since. Since 20261201190000 a new attempt clears the retry it ran
    -- under; an operation that was running then may still hold one, and this keeps it from
    -- taking this path away from its attempt.
    IF v_op.fencing_token = p_token AND v_op.state IN ('succeeded', 'failed', 'rejected')
      AND (v_op.resolution IS NULL OR (v_op.resolution ->> 'at')::timestamptz < v_att.started_at) THEN
      PERFORM 1 FROM audit_event WHERE tenant_id = p_tenant_id AND target_type = 'operation' AND target_id = p_op_id
        AND action = 'operation.complete_conflict' AND after ->> 'digest' = p_digest;
      IF NOT FOUND THEN
        UPDATE operation SET flagged_at = now(), updated_at = now(),
          flag_reason = format('attempt %s reported %s after it had reported %s', v_att.number, p_outcome, tollgate_outcome_words(v_att.outcome))
        WHERE id = v_op.id RETURNING * INTO v_op;
        PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.complete_conflict', v_op.id, jsonb_build_object('state', v_op.state),
          jsonb_build_object('reportedOutcome', p_outcome, 'attempt', v_att.number, 'earlierOutcome', v_att.outcome,
            'result', p_result, 'error', p_error, 'digest', p_digest),
          'the attempt reported an outcome that contradicts its own earlier report');
      END IF;
      RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_op),
        'detail', format('This attempt already reported %s; the operation is %s', tollgate_outcome_words(v_att.outcome), v_op.state));
    END IF;
  END IF;
  -- The attempt that holds the operation reports succeeded or unknown while the operation waits
  -- to retry, before any retry started: the effect happened or may have, and the next claim would
  -- run the tool again. Not applied, but the operation becomes unknown, as an agent's failed with
  -- a side effect sent does: a retry gets 409 outcome-unknown, and the reconcile queue shows it
  -- with both reports.
  -- It waits to retry because this attempt reported failed (retryable), as before, or
  -- because an operator resolved it as retry (its lease had run out): the report then
  -- contradicts that decision, and gets 409 already-resolved and a flag, as a report contradicting
  -- any resolution does. And "unknown" counts as much as "succeeded" (review, 2026-12-01): it was
  -- a late report (lease-lost, audited), and the retry ran.
  -- [changed] Or an earlier attempt says it succeeded while a later one, which itself failed
  -- (retryable), waits to retry (review, 2026-12-02): it was only flagged, and the claim ignores
  -- flags, so the next attempt ran the tool a third time. The same news as a side effect's late
  -- `confirmed` made the operation unknown (tollgate_side_effect_late_report); so does this.
  IF v_op.state = 'pending' AND ((v_op.fencing_token = p_token AND p_outcome IN ('succeeded', 'unknown')
      AND (v_att.complete_digest IS NOT NULL OR v_op.resolution ->> 'outcome' = 'retry'))
    OR (v_op.fencing_token <> p_token AND p_outcome = 'succeeded')) THEN
    v_superseded := v_op.fencing_token <> p_token; -- [changed]
    -- The operator's retry, when it came after this attempt started (a resolution left
    -- from an earlier attempt is not about this one).
    v_by_operator := NOT v_superseded AND v_op.resolution ->> 'outcome' = 'retry' AND (v_op.resolution ->> 'at')::timestamptz >= v_att.started_at; -- [changed]
    UPDATE operation SET state = 'unknown', not_before = NULL, updated_at = now(),
      error = jsonb_build_object('code', 'contradicting-reports', 'message',
        CASE WHEN v_by_operator
          THEN format('attempt %s reported %s after an operator resolved the operation as retry: the effect may have happened', v_att.number, p_outcome)
          WHEN v_superseded -- [changed]
          THEN format('attempt %s reported succeeded after attempt %s started, while the operation waits to retry: the effect may have happened', v_att.number, v_op.attempt_count)
          ELSE format('attempt %s reported %s, then %s: the effect may have happened', v_att.number, tollgate_outcome_words(v_att.outcome), p_outcome) END),
      flagged_at = CASE WHEN v_by_operator THEN now() ELSE flagged_at END,
      flag_reason = CASE WHEN v_by_operator
        THEN format('attempt %s reported %s after an operator resolved the operation as retry', v_att.number, p_outcome) ELSE flag_reason END
    WHERE id = v_op.id RETURNING * INTO v_new;
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.unknown', v_op.id,
      jsonb_build_object('state', v_op.state, 'attempt', v_att.number),
      jsonb_build_object('state', 'unknown', 'attempt', v_att.number, 'reportedOutcome', p_outcome,
        'earlierOutcome', CASE WHEN v_att.complete_digest IS NOT NULL THEN v_att.outcome END, 'resolution', v_op.resolution -> 'outcome',
        'result', p_result, 'error', p_error, 'provider', p_provider, 'digest', p_digest),
      CASE WHEN v_by_operator
        THEN format('attempt %s reported %s after an operator resolved the operation as retry: the effect may have happened, so no retry runs until evidence or an operator settles it', v_att.number, p_outcome)
        WHEN v_superseded -- [changed]
        THEN format('attempt %s reported succeeded after attempt %s started, while the operation waits to retry: the effect may have happened, so no retry runs until evidence or an operator settles it', v_att.number, v_op.attempt_count)
        ELSE format('attempt %s reported %s after it had reported %s: the effect may have happened, so no retry runs until evidence or an operator settles it', v_att.number, p_outcome, tollgate_outcome_words(v_att.outcome)) END);
    IF v_by_operator THEN
      RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_new), 'becameUnknown', true,
        'detail', format('An operator resolved the operation as retry after this attempt''s lease ran out; your report (%s) is recorded and the operation is now unknown, for evidence or an operator to settle', p_outcome));
    END IF;
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_new), 'becameUnknown', true);
  END IF;
  IF v_op.fencing_token <> p_token OR v_op.state IN ('pending', 'unknown', 'awaiting_approval') THEN
    -- A newer attempt holds the operation, or the lease ran out and the outcome became unknown.
    -- The report changes nothing, but what it says is evidence: a taken-over attempt that says
    -- it succeeded may have acted a second time (if the provider did not dedupe on the downstream
    -- key), and one whose outcome became unknown may say what happened. It goes to the audit log
    -- (and so the trace), once per distinct report.
    -- [changed] The same report that made the operation unknown, repeated, is kept already: no
    -- second audit row (protocol review, 2026-12-02).
    PERFORM 1 FROM audit_event WHERE tenant_id = p_tenant_id AND target_type = 'operation' AND target_id = p_op_id
      AND action IN ('operation.late_report_refused', 'operation.unknown') AND after ->> 'digest' = p_digest;
    IF NOT FOUND THEN
      -- A superseded attempt (a newer one started) says it succeeded: the tool acted under
      -- it, and the newer attempt may act again. Unless the tool's provider dedupes on the
      -- downstream key every attempt shares (takeover deduplicated) and this attempt had said
      -- nothing else before, that is a possible second effect, and the operation is flagged for an
      -- operator (it was only audited: the operator who allowed the retry, or the retry after its
      -- failure, never heard that the first call went through after all).
      IF p_outcome = 'succeeded' AND v_op.fencing_token <> p_token THEN
        SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
        -- Whatever the takeover policy, a success under an operation recorded as failed contradicts
        -- it: every replay says nothing happened.
        IF v_tool.takeover <> 'deduplicated' OR v_att.complete_digest IS NOT NULL OR v_op.state = 'failed' THEN
          UPDATE operation SET flagged_at = now(), updated_at = now(),
            flag_reason = CASE WHEN v_op.state = 'failed'
              THEN format('attempt %s reported succeeded after attempt %s started, but the operation is failed', v_att.number, v_op.attempt_count)
              ELSE format('attempt %s reported succeeded after attempt %s started: the tool may have acted twice', v_att.number, v_op.attempt_count) END
          WHERE id = v_op.id RETURNING * INTO v_op;
        END IF;
      END IF;
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.late_report_refused', v_op.id, jsonb_build_object('state', v_op.state),
        -- earlierOutcome: what this attempt itself reported before, when it did.
        jsonb_build_object('reportingAttempt', v_att.number, 'newestAttempt', v_op.attempt_count, 'reportedOutcome', p_outcome,
          'earlierOutcome', CASE WHEN v_att.complete_digest IS NOT NULL THEN v_att.outcome END,
          'result', p_result, 'error', p_error, 'provider', p_provider, 'digest', p_digest),
        CASE WHEN v_att.complete_digest IS NOT NULL AND v_op.fencing_token <> p_token
          THEN format('attempt %s reported %s after it had reported %s and attempt %s started; refused (lease-lost)', v_att.number, p_outcome,
            tollgate_outcome_words(v_att.outcome), v_op.attempt_count)
          WHEN v_att.complete_digest IS NOT NULL
          THEN format('attempt %s reported %s after it had reported %s; refused (lease-lost)', v_att.number, p_outcome, tollgate_outcome_words(v_att.outcome))
          WHEN v_op.fencing_token <> p_token
          THEN format('attempt %s reported %s after attempt %s took over; refused (lease-lost)', v_att.number, p_outcome, v_op.attempt_count)
          ELSE format('attempt %s reported %s after its lease expired and the operation became %s; refused (lease-lost)', v_att.number, p_outcome, v_op.state) END);
    END IF;
    RETURN jsonb_build_object('code', 'lease-lost', 'op', tollgate_op_view(v_op));
  END IF;

  IF v_op.state IN ('succeeded', 'failed', 'rejected') THEN
    -- A webhook or an operator settled the operation while this attempt was running.
    IF p_outcome = 'unknown' OR p_outcome::text = v_op.state::text THEN
      UPDATE attempt SET ended_at = coalesce(ended_at, now()), complete_digest = p_digest, provider = p_provider, error = p_error,
        outcome = coalesce(outcome, CASE WHEN p_outcome = 'failed' AND p_retryable THEN 'retryable_failure' ELSE p_outcome END::attempt_outcome)
      WHERE id = v_att.id;
      -- The attempt a settle left open has ended: nothing is left for the reaper.
      IF v_op.open_attempt_until IS NOT NULL AND v_op.fencing_token = p_token THEN
        UPDATE operation SET open_attempt_until = NULL WHERE id = v_op.id RETURNING * INTO v_op;
      END IF;
      -- The evidence settled the outcome but carried no result; the agent's agreeing report does.
      -- It is stored once, only while no replay has been served (replays count synchronously in
      -- the claim), so every replay ever served stays byte-for-byte the same. A resource id the
      -- resolution already named is kept.
      -- Only from an attempt still open: one whose lease ended before it reported (closed
      -- as lease_lost by a settle, by the reaper, or when the outcome became unknown) is a stale
      -- holder, whose agreeing report is acknowledged and audited but never becomes the result.
      v_fill := p_outcome = 'succeeded' AND v_att.ended_at IS NULL AND v_op.replay_count = 0 AND p_result IS NOT NULL
        AND coalesce(v_op.result -> 'statusCode', 'null'::jsonb) = 'null'::jsonb
        AND coalesce(v_op.result -> 'body', 'null'::jsonb) = 'null'::jsonb;
      IF v_fill THEN
        UPDATE operation SET updated_at = now(), result = jsonb_build_object('statusCode', p_result -> 'statusCode',
            'body', p_result -> 'body',
            'resourceId', coalesce(nullif(result -> 'resourceId', 'null'::jsonb), p_result -> 'resourceId'))
        WHERE id = v_op.id RETURNING * INTO v_op;
      END IF;
      -- Audited either way: the agent's result and provider ids are evidence for the trace.
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.complete_agreed', v_op.id,
        jsonb_build_object('state', v_op.state, 'attempt', v_att.number),
        jsonb_build_object('state', v_op.state, 'attempt', v_att.number, 'reportedOutcome', p_outcome, 'result', p_result,
          'error', p_error, 'provider', p_provider, 'resultStored', v_fill),
        CASE WHEN v_fill THEN 'the agent''s report agrees with the resolution; its result is stored'
          WHEN p_outcome = 'succeeded' THEN 'the agent''s report agrees with the resolution; the stored result is kept' END);
      RETURN jsonb_build_object('code', 'agrees', 'op', tollgate_op_view(v_op));
    END IF;
    -- The contradicting report ends its attempt too (it was left open only to hear it),
    -- marked so that the same report repeated gets this answer again and nothing more.
    UPDATE attempt SET ended_at = coalesce(ended_at, now()), complete_digest = 'conflict:' || p_digest, provider = p_provider, error = p_error,
      outcome = coalesce(outcome, CASE WHEN p_outcome = 'failed' AND p_retryable THEN 'retryable_failure' ELSE p_outcome END::attempt_outcome)
    WHERE id = v_att.id;
    UPDATE operation SET flagged_at = now(), flag_reason = format('attempt %s reported %s after the operation was resolved %s',
      v_att.number, p_outcome, v_op.state), updated_at = now(),
      open_attempt_until = CASE WHEN fencing_token = p_token THEN NULL ELSE open_attempt_until END
    WHERE id = v_op.id RETURNING * INTO v_new;
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.complete_conflict', v_op.id, jsonb_build_object('state', v_op.state),
      jsonb_build_object('reportedOutcome', p_outcome, 'attempt', v_att.number, 'result', p_result, 'error', p_error),
      'the agent reported an outcome that contradicts the resolution');
    RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_new),
      'detail', format('The operation was already resolved as %s', v_op.state));
  END IF;

  -- processing, and this attempt holds the newest token: apply the report. A late report after
  -- the lease expired is still accepted when nobody took over, because it is the truth.
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
  IF p_outcome = 'succeeded' THEN
    v_state := 'succeeded'; v_att_outcome := 'succeeded';
    -- A provider's webhook said one of this operation's side effects failed (the event
    -- named that effect's own key, so it could not settle the whole operation), and the agent now
    -- says the operation succeeded. Applied (the agent may have worked around it), but flagged for
    -- an operator, as the same two reports in the other order are (the event then contradicts the
    -- settled operation). A failure the agent recorded itself is its own knowledge: not flagged.
    SELECT format('webhook %s (%s) says side effect %s failed', e.id, e.event_type, s.name) INTO v_effect_failed
    FROM side_effect s JOIN webhook_event e ON e.tenant_id = s.tenant_id AND e.operation_id = s.operation_id
      AND e.correlation_value = s.downstream_key AND e.outcome = 'failed' AND e.status = 'matched'
    WHERE s.tenant_id = p_tenant_id AND s.operation_id = p_op_id AND s.state = 'failed'
    ORDER BY s.name, e.received_at LIMIT 1;
  ELSIF p_outcome = 'unknown' THEN
    v_state := 'unknown'; v_att_outcome := 'unknown';
  ELSIF p_retryable AND v_op.attempt_count < v_op.max_attempts THEN
    v_state := 'pending'; v_att_outcome := 'retryable_failure';
    -- Full jitter: uniform in [0, min(cap, base * 2^(n-1))).
    v_delay_ms := random() * least(v_tool.backoff_cap_ms::double precision,
      v_tool.backoff_base_ms * power(2::double precision, v_op.attempt_count - 1));
  ELSE
    v_state := 'failed'; v_att_outcome := CASE WHEN p_retryable THEN 'retryable_failure' ELSE 'failed' END;
    -- `failed` is final and means "definitely no effect". A side effect this operation recorded as
    -- sent, unknown or confirmed says the provider was called and may have acted (or did): the
    -- operation's outcome is then unknown, for evidence or an operator to settle, never a failure
    -- that replays tell every retry. (A retryable failure with attempts left still goes back to
    -- pending: the next attempt reuses each effect's downstream key and sees how far this one got.)
    SELECT string_agg(format('%s: %s', name, state), ', ' ORDER BY name) INTO v_effects
    FROM side_effect WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND state IN ('sent', 'unknown', 'confirmed');
    IF v_effects IS NOT NULL THEN
      v_state := 'unknown';
    END IF;
  END IF;

  UPDATE attempt SET outcome = v_att_outcome, ended_at = now(), error = p_error, provider = p_provider, complete_digest = p_digest
  WHERE id = v_att.id;
  UPDATE operation SET state = v_state, updated_at = now(), lease_expires_at = NULL,
    result = CASE WHEN v_state = 'pending' THEN result ELSE p_result END,
    error = p_error,
    not_before = CASE WHEN v_state = 'pending' THEN now() + make_interval(secs => v_delay_ms / 1000.0) END,
    flagged_at = CASE WHEN v_effect_failed IS NOT NULL THEN now() ELSE flagged_at END,
    flag_reason = CASE WHEN v_effect_failed IS NOT NULL
      THEN format('attempt %s reported succeeded, but %s', v_att.number, v_effect_failed) ELSE flag_reason END,
    completed_at = CASE WHEN v_state IN ('succeeded', 'failed') THEN now() END,
    result_expires_at = CASE WHEN v_state IN ('succeeded', 'failed') THEN now() + make_interval(hours => v_tool.result_retention_hours) END
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, CASE v_state WHEN 'pending' THEN 'operation.retry_scheduled'
      WHEN 'unknown' THEN 'operation.unknown' ELSE 'operation.completed' END, v_op.id,
    jsonb_build_object('state', 'processing', 'attempt', v_att.number),
    jsonb_build_object('state', v_state, 'attempt', v_att.number, 'outcome', p_outcome, 'retryable', p_retryable, 'notBefore', v_new.not_before),
    CASE WHEN v_state = 'unknown' AND v_effects IS NOT NULL
      THEN format('the agent reported failed, but side effects may have happened (%s)', v_effects)
      WHEN v_effect_failed IS NOT NULL
      THEN format('the agent reported succeeded, but %s: flagged for an operator', v_effect_failed)
      WHEN v_state = 'unknown' THEN 'the agent reported an unknown outcome' END);
  RETURN jsonb_build_object('code', 'completed', 'op', tollgate_op_view(v_new), 'state', v_state);
END $$;
