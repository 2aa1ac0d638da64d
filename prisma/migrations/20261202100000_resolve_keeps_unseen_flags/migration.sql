-- From a review (2026-12-02), after the inbox match's fix (20261202090000): an operator's resolve
-- in the console took down whatever flag stood on the operation, including one raised after the
-- page was read (from the reconcile queue, which showed no flags, or a trace open for a while).
-- The console now says which flag the person saw (null for none), and a resolve whose flag
-- changed since is a 409 like a new attempt. The admin API's resolve, which says nothing of a
-- flag, keeps answering the flag it finds (documented).
--
-- tollgate_resolve (from 20261201210000_retry_within_attempt_limit), re-declared whole with two
-- more parameters; only the parts marked [changed] differ. The probes' calls pass eight
-- arguments and take the defaults.
DROP FUNCTION tollgate_resolve(text, text, text, text, text, text, text, text, integer);

CREATE FUNCTION tollgate_resolve(p_tenant_id text, p_op_id text, p_outcome text, p_reason text, p_resource_id text,
  p_evidence text, p_actor text, p_via text,
  p_seen_attempts integer DEFAULT NULL,
  p_seen_flag_known boolean DEFAULT false, -- [changed] the flag the console showed on the operation
  p_seen_flagged_at timestamptz DEFAULT NULL)
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
  -- [changed] The flag the person saw on it, or that it had none: an operator's resolve takes the
  -- flag down (below), so one raised since (a superseded attempt saying it succeeded: the tool
  -- may have acted twice) is refused like a new attempt, and they read it before deciding.
  IF p_via = 'operator' AND p_seen_flag_known AND v_op.flagged_at IS DISTINCT FROM p_seen_flagged_at THEN
    RETURN jsonb_build_object('code', 'operation-changed', 'changed', 'flag', 'op', tollgate_op_view(v_op),
      'flagged', v_op.flagged_at IS NOT NULL);
  END IF;
  -- An operation runs at most 1,000 attempts (the operation_attempts_range CHECK): a
  -- retry past that broke the CHECK on max_attempts, a 500 for the operator's form. Refused, so the
  -- person settles the outcome instead.
  IF p_outcome = 'retry' AND v_op.attempt_count >= 1000 THEN
    RETURN jsonb_build_object('code', 'attempts-exhausted', 'op', tollgate_op_view(v_op));
  END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
  v_resolution := jsonb_build_object('outcome', p_outcome, 'by', p_actor, 'via', p_via, 'reason', p_reason,
    'resourceId', p_resource_id, 'evidence', p_evidence, 'at', now(), 'fromState', v_op.state);
  UPDATE attempt SET outcome = 'lease_lost', ended_at = now(),
    error = jsonb_build_object('code', 'lease-expired', 'message', 'The lease expired before the attempt reported an outcome')
  WHERE tenant_id = p_tenant_id AND operation_id = p_op_id AND fencing_token = v_op.fencing_token AND outcome IS NULL;
  UPDATE operation SET updated_at = now(), lease_expires_at = NULL, resolution = v_resolution,
    state = CASE p_outcome WHEN 'retry' THEN 'pending' ELSE p_outcome END::operation_state,
    -- The result every replay returns is the resolution's own: a resource id, and no
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
      'result', CASE WHEN p_outcome <> 'retry' THEN v_op.result END),
    jsonb_build_object('state', v_new.state, 'outcome', p_outcome, 'via', p_via,
      'resourceId', p_resource_id, 'evidence', p_evidence), p_reason);
  RETURN jsonb_build_object('code', 'resolved', 'op', tollgate_op_view(v_new));
END $$;
