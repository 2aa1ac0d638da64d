-- What a resolution leaves on the operation (protocol review, 2026-12-01):
-- - resolving an unknown outcome (an operator, a probe, a provider's webhook, an inbox match) kept
--   the result of the report that made it unknown: a 504 from a timeout was then replayed as the
--   result of a success, or of a failure. The resolution now states its own result (a resource id,
--   no status or body; nothing for a failure), and the replaced one goes to the audit's before;
-- - an operator's retry stayed on the row as its resolution after the next attempt settled it.
--
-- tollgate_resolve (from 20261201170000_resolve_what_was_seen), tollgate_webhook_settle (from
-- 20261201180000_events_about_operations_not_run) and tollgate_start_attempt (from
-- 20261130180002_attempt_ids_lead_with_time) re-declared whole with the same signatures; only the
-- parts marked [changed] differ from them.

CREATE OR REPLACE FUNCTION tollgate_resolve(p_tenant_id text, p_op_id text, p_outcome text, p_reason text, p_resource_id text,
  p_evidence text, p_actor text, p_via text,
  p_seen_attempts integer DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
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
  -- What the person saw: an attempt started since (someone allowed a retry, and it ran and ended
  -- in doubt again) is not what their evidence was about.
  IF p_seen_attempts IS NOT NULL AND v_op.attempt_count <> p_seen_attempts THEN
    RETURN jsonb_build_object('code', 'operation-changed', 'op', tollgate_op_view(v_op), 'seenAttempts', p_seen_attempts);
  END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
  v_resolution := jsonb_build_object('outcome', p_outcome, 'by', p_actor, 'via', p_via, 'reason', p_reason,
    'resourceId', p_resource_id, 'evidence', p_evidence, 'at', now(), 'fromState', v_op.state);
  UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  UPDATE operation SET updated_at = now(), lease_expires_at = NULL, resolution = v_resolution,
    state = CASE p_outcome WHEN 'retry' THEN 'pending' ELSE p_outcome END::operation_state,
    -- [changed] The result every replay returns is the resolution's own: a resource id, and no
    -- status or body, as no report of a success was stored. What the operation held was the
    -- result of a report that did not settle it (an unknown outcome's timeout, say): replayed as
    -- the outcome of a success, or of a failure, it told every retry what never happened. It
    -- stays on the audit (before) and the attempt's report. A retry keeps it until an attempt reports.
    result = CASE p_outcome
      WHEN 'succeeded' THEN jsonb_build_object('statusCode', NULL, 'body', NULL,
        'resourceId', coalesce(to_jsonb(p_resource_id), result -> 'resourceId'))
      WHEN 'failed' THEN NULL
      ELSE result END,
    error = CASE p_outcome WHEN 'succeeded' THEN NULL
      WHEN 'failed' THEN jsonb_build_object('code', 'resolved-failed', 'message', p_reason) ELSE error END,
    -- No backoff: the operator says retry now. (now() was this transaction's start, so a
    -- claim that had waited on the row lock, with an earlier start, answered 429 retry-backoff.)
    not_before = NULL,
    -- A person who settled the outcome has answered what a flag asked (evidence that
    -- disagreed); an automatic probe has not.
    flagged_at = CASE WHEN p_via = 'operator' THEN NULL ELSE flagged_at END,
    flag_reason = CASE WHEN p_via = 'operator' THEN NULL ELSE flag_reason END,
    max_attempts = CASE WHEN p_outcome = 'retry' THEN greatest(max_attempts, attempt_count + 1) ELSE max_attempts END,
    completed_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() END,
    result_expires_at = CASE WHEN p_outcome = 'retry' THEN NULL ELSE now() + make_interval(hours => v_tool.result_retention_hours) END
  WHERE id = p_op_id RETURNING * INTO v_new;
  PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.resolved', p_op_id,
    -- The flag it took down, if any.
    jsonb_build_object('state', v_op.state, 'flagReason', CASE WHEN p_via = 'operator' THEN v_op.flag_reason END,
      'result', CASE WHEN p_outcome <> 'retry' THEN v_op.result END), -- [changed]
    jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', p_via,
      'resourceId', p_resource_id, 'evidence', p_evidence), p_reason);
  RETURN jsonb_build_object('code', 'resolved', 'op', tollgate_op_view(v_new));
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
  -- ended with a retryable failure, so no attempt is open). Not one that never ran.
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
    -- [changed] The evidence's own result, as tollgate_resolve's: a resource id, no status or body
    -- (the agent's agreeing report may fill them in, tollgate_complete), never the result of a
    -- report that did not settle the operation (an unknown outcome's, a retryable failure's).
    result = CASE WHEN p_outcome = 'succeeded'
      THEN jsonb_build_object('statusCode', NULL, 'body', NULL,
        -- [changed] A JSON null there is no resource id: the attempt's reported one fills in.
        'resourceId', coalesce(nullif(result -> 'resourceId', 'null'::jsonb), to_jsonb(v_resource_id)))
      ELSE NULL END,
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
    jsonb_build_object('state', v_op.state, 'leaseLive', v_live, 'result', v_op.result), -- [changed]
    jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', 'webhook', 'resourceId', v_new.result ->> 'resourceId', 'evidence', p_evidence),
    p_reason);
  RETURN v_new;
END $$;

CREATE OR REPLACE FUNCTION tollgate_start_attempt(v_op operation, p_lease_seconds int, p_principal text, p_api_key_id text,
  p_workflow_id text, p_trace_id text) RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_token bigint := nextval('fencing_token_seq');
  v_new operation;
BEGIN
  UPDATE operation SET state = 'processing', attempt_count = attempt_count + 1, fencing_token = v_token,
    lease_expires_at = now() + make_interval(secs => p_lease_seconds), not_before = NULL, updated_at = now(),
    -- [changed] An operator's retry (the only resolution an operation that runs again can hold)
    -- was about the attempt before: it stayed on the row, and the status view of the outcome this
    -- attempt reports said "resolved as retry by …". The audit log keeps the decision.
    resolution = NULL
  WHERE id = v_op.id RETURNING * INTO v_new;
  INSERT INTO attempt (id, tenant_id, operation_id, number, fencing_token, principal, api_key_id, lease_expires_at, workflow_id, trace_id)
  VALUES (tollgate_new_attempt_id(), v_new.tenant_id, v_new.id, v_new.attempt_count, v_token,
    p_principal, p_api_key_id, v_new.lease_expires_at, p_workflow_id, p_trace_id);
  RETURN v_new;
END $$;
