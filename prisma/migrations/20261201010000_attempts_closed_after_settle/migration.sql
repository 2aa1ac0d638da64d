-- Mends found by a race probe against two instances (2026-12-01). Functions are re-declared whole;
-- only the parts marked [changed] differ from their previous migration.
--
-- An attempt a webhook (or an operator's inbox match) settled under a live lease stayed open
-- forever when its agent crashed or contradicted the settle: no end, no outcome, a trace saying
-- "lease expires … 18 min ago", side-effect reports accepted without limit, and every repeat of a
-- contradicting complete flagged and audited again. Now the settle records until when the attempt
-- may still report (operation.open_attempt_until), a contradicting complete ends the attempt like
-- an agreeing one, and tollgate_close_settled_attempts (the worker's lease reaper) ends the ones
-- that never reported once that time has passed.

ALTER TABLE "operation" ADD COLUMN "open_attempt_until" TIMESTAMPTZ(3);

-- Only operations settled under a live lease whose attempt has not reported yet: a handful of rows.
-- Heartbeats never touch the column (a settled operation takes no heartbeat), so they stay HOT.
CREATE INDEX "operation_open_attempt_until_idx" ON "operation" ("open_attempt_until") WHERE "open_attempt_until" IS NOT NULL;

-- Attempts settles left open before this migration: the reaper ends them too (once, a scan of the
-- attempts still open).
UPDATE "operation" o SET "open_attempt_until" = a."lease_expires_at"
FROM "attempt" a
WHERE a."tenant_id" = o."tenant_id" AND a."operation_id" = o."id" AND a."fencing_token" = o."fencing_token"
  AND a."ended_at" IS NULL AND o."state" IN ('succeeded', 'failed');

-- ---------------------------------------------------------------------------------------------
-- tollgate_complete (from 20261130220000_late_reports_after_settle).
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
    -- [changed] The same report that contradicted a settled operation, repeated: the same answer,
    -- without flagging the operation or auditing it again.
    IF v_att.complete_digest = 'conflict:' || p_digest THEN
      RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_op),
        'detail', format('The operation was already resolved as %s', v_op.state));
    END IF;
    RETURN jsonb_build_object('code', 'already-resolved', 'op', tollgate_op_view(v_op),
      'detail', 'This attempt already reported a different outcome');
  END IF;
  IF v_op.fencing_token <> p_token OR v_op.state IN ('pending', 'unknown', 'awaiting_approval') THEN
    -- A newer attempt holds the operation, or the lease ran out and the outcome became unknown.
    -- The report changes nothing, but what it says is evidence: a taken-over attempt that says
    -- it succeeded may have acted a second time (if the provider did not dedupe on the downstream
    -- key), and one whose outcome became unknown may say what happened. It goes to the audit log
    -- (and so the trace), once per distinct report.
    PERFORM 1 FROM audit_event WHERE tenant_id = p_tenant_id AND target_type = 'operation' AND target_id = p_op_id
      AND action = 'operation.late_report_refused' AND after ->> 'digest' = p_digest;
    IF NOT FOUND THEN
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.late_report_refused', v_op.id, jsonb_build_object('state', v_op.state),
        jsonb_build_object('reportingAttempt', v_att.number, 'newestAttempt', v_op.attempt_count, 'reportedOutcome', p_outcome,
          'result', p_result, 'error', p_error, 'provider', p_provider, 'digest', p_digest),
        CASE WHEN v_op.fencing_token <> p_token
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
      -- [changed] The attempt a settle left open has ended: nothing is left for the reaper.
      IF v_op.open_attempt_until IS NOT NULL AND v_op.fencing_token = p_token THEN
        UPDATE operation SET open_attempt_until = NULL WHERE id = v_op.id RETURNING * INTO v_op;
      END IF;
      -- The evidence settled the outcome but carried no result; the agent's agreeing report does.
      -- It is stored once, only while no replay has been served (replays count synchronously in
      -- the claim), so every replay ever served stays byte-for-byte the same. A resource id the
      -- resolution already named is kept.
      -- [changed] Only from an attempt still open: one whose lease ended before it reported (closed
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
    -- [changed] The contradicting report ends its attempt too (it was left open only to hear it),
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
    completed_at = CASE WHEN v_state IN ('succeeded', 'failed') THEN now() END,
    result_expires_at = CASE WHEN v_state IN ('succeeded', 'failed') THEN now() + make_interval(hours => v_tool.result_retention_hours) END
  WHERE id = v_op.id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, CASE v_state WHEN 'pending' THEN 'operation.retry_scheduled'
      WHEN 'unknown' THEN 'operation.unknown' ELSE 'operation.completed' END, v_op.id,
    jsonb_build_object('state', 'processing', 'attempt', v_att.number),
    jsonb_build_object('state', v_state, 'attempt', v_att.number, 'outcome', p_outcome, 'retryable', p_retryable, 'notBefore', v_new.not_before),
    CASE WHEN v_state = 'unknown' AND v_effects IS NOT NULL
      THEN format('the agent reported failed, but side effects may have happened (%s)', v_effects)
      WHEN v_state = 'unknown' THEN 'the agent reported an unknown outcome' END);
  RETURN jsonb_build_object('code', 'completed', 'op', tollgate_op_view(v_new), 'state', v_state);
END $$;

-- ---------------------------------------------------------------------------------------------
-- tollgate_webhook_settle (from 20261129225308_webhook_side_effect_keys).
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
    -- [changed] A live lease's attempt stays open to report (an agreeing complete, its side
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

-- ---------------------------------------------------------------------------------------------
-- tollgate_resolve (from 20261129200100_invariants_and_protocol): an operator's retry set
-- not_before to now(), which a concurrent claim read as a backoff (see the marked line).
CREATE OR REPLACE FUNCTION tollgate_resolve(p_tenant_id text, p_op_id text, p_outcome text, p_reason text, p_resource_id text,
  p_evidence text, p_actor text, p_via text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_tool tool;
  v_new operation;
  v_resolution jsonb;
BEGIN
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF NOT (v_op.state = 'unknown' OR (v_op.state = 'processing' AND v_op.lease_expires_at <= now())) THEN
    RETURN jsonb_build_object('code', 'invalid-state', 'op', tollgate_op_view(v_op));
  END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
  v_resolution := jsonb_build_object('outcome', p_outcome, 'by', p_actor, 'via', p_via, 'reason', p_reason,
    'resourceId', p_resource_id, 'evidence', p_evidence, 'at', now(), 'fromState', v_op.state);
  UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  UPDATE operation SET updated_at = now(), lease_expires_at = NULL, resolution = v_resolution,
    state = CASE p_outcome WHEN 'retry' THEN 'pending' ELSE p_outcome END::operation_state,
    result = CASE WHEN p_outcome = 'succeeded'
      THEN jsonb_build_object('statusCode', result -> 'statusCode', 'body', result -> 'body',
        'resourceId', coalesce(to_jsonb(p_resource_id), result -> 'resourceId'))
      ELSE result END,
    error = CASE p_outcome WHEN 'succeeded' THEN NULL
      WHEN 'failed' THEN jsonb_build_object('code', 'resolved-failed', 'message', p_reason) ELSE error END,
    -- [changed] No backoff: the operator says retry now. (now() was this transaction's start, so a
    -- claim that had waited on the row lock, with an earlier start, answered 429 retry-backoff.)
    not_before = NULL,
    max_attempts = CASE WHEN p_outcome = 'retry' THEN greatest(max_attempts, attempt_count + 1) ELSE max_attempts END,
    completed_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() END,
    result_expires_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() + make_interval(hours => v_tool.result_retention_hours) END
  WHERE id = p_op_id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.resolved', p_op_id,
    jsonb_build_object('state', v_op.state), jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', p_via,
      'resourceId', p_resource_id, 'evidence', p_evidence), p_reason);
  RETURN jsonb_build_object('code', 'resolved', 'op', tollgate_op_view(v_new));
END $$;

-- ---------------------------------------------------------------------------------------------
-- The attempts settles left open whose lease has run out without a report: ended as lease_lost
-- (audited), so the operation's trace ends them and they report nothing more. Rows a concurrent
-- complete holds are skipped and settle themselves. Returns how many were closed.
CREATE FUNCTION tollgate_close_settled_attempts(p_limit int, p_grace_seconds int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_att attempt;
  v_closed int := 0;
BEGIN
  FOR v_op IN SELECT * FROM operation WHERE open_attempt_until < now() - make_interval(secs => p_grace_seconds)
    ORDER BY open_attempt_until LIMIT p_limit FOR UPDATE SKIP LOCKED
  LOOP
    UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
      error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired after the operation was settled, and the attempt never reported')
    WHERE tenant_id = v_op.tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token AND ended_at IS NULL
    RETURNING * INTO v_att;
    UPDATE operation SET open_attempt_until = NULL WHERE id = v_op.id;
    IF v_att.id IS NOT NULL THEN
      PERFORM tollgate_audit(v_op.tenant_id, 'system:lease-reaper', 'operation.attempt_lease_expired', v_op.id,
        jsonb_build_object('state', v_op.state, 'attempt', v_att.number),
        jsonb_build_object('state', v_op.state, 'attempt', v_att.number, 'attemptOutcome', 'lease_lost'),
        format('attempt %s never reported after the operation was settled %s; its lease ran out', v_att.number, v_op.state));
      v_closed := v_closed + 1;
    END IF;
  END LOOP;
  RETURN v_closed;
END $$;
