-- From a review of the approvals (2026-12-02): a granted approval never expired. An approved
-- operation nobody claimed stayed 'pending' for ever, and the same key and args claimed three
-- weeks later ran on a three-week-old yes. A yes now has a use-by: its decided_at plus the tool's
-- approvalTtlSeconds, i.e. the agent has as long to act on a yes as the approver had to give it
-- (read from the tool when checked, so shortening a tool's TTL shortens yeses already given too).
-- Past it, the operation's first attempt is refused: the claim (or the periodic sweep, for one
-- never claimed again) rejects the operation with error approval-expired, marks the approval
-- 'expired' (keeping who approved it and when) and audits approval.expired, as for a request
-- that expired undecided; the agent's claim is 403 approval-rejected.
--
-- Also: the claim and the decision say when they wrote an expiry themselves ('expiredNow'), so
-- the expiry metric counts each expiry once, where it was written (it counted every 409 after
-- the sweep, and never a claim's).
--
-- tollgate_claim (from 20261202160000_saturating_counters), tollgate_decide_approval (from
-- 20261202093000_requester_cannot_approve) and tollgate_expire_approvals (from
-- 20261129222947_approval_decisions) are re-declared whole; only the parts marked [changed]
-- differ. Earlier [changed] marks are taken out. tollgate_approval_use_by and
-- tollgate_expire_unclaimed_approval are new.

-- When an approval's yes stops authorizing the first attempt. One rule for the claim and the
-- sweep; inlinable (one SELECT, STABLE: timestamptz arithmetic is not IMMUTABLE).
CREATE FUNCTION tollgate_approval_use_by(p_decided_at timestamptz, p_ttl_seconds integer) RETURNS timestamptz
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT p_decided_at + make_interval(secs => p_ttl_seconds)
$$;

-- Moves a locked, approved but never attempted ('pending', attempt_count 0) operation to
-- rejected and its approval to expired. decided_by, decided_at and reason stay the approver's:
-- who said yes, and when, is still true; the audit row says it lapsed.
CREATE FUNCTION tollgate_expire_unclaimed_approval(v_op operation, v_approval approval, p_ttl_seconds integer)
RETURNS operation LANGUAGE plpgsql AS $$
DECLARE
  v_retention int;
  v_use_by timestamptz := tollgate_approval_use_by(v_approval.decided_at, p_ttl_seconds);
BEGIN
  SELECT result_retention_hours INTO v_retention FROM tool WHERE tenant_id = v_op.tenant_id AND name = v_op.tool;
  UPDATE approval SET state = 'expired' WHERE id = v_approval.id;
  UPDATE operation SET state = 'rejected', completed_at = now(), updated_at = now(),
    error = jsonb_build_object('code', 'approval-expired',
      'message', 'The approval was granted but not acted on before its use-by (' || to_char(v_use_by AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ')'),
    result_expires_at = now() + make_interval(hours => coalesce(v_retention, 24))
  WHERE id = v_op.id RETURNING * INTO v_op;
  PERFORM tollgate_audit(v_op.tenant_id, 'system:approval-expiry', 'approval.expired', v_op.id,
    jsonb_build_object('state', 'pending', 'approvalId', v_approval.id, 'approvalState', 'approved', 'useBy', v_use_by),
    jsonb_build_object('state', 'rejected', 'approvalId', v_approval.id, 'approvalState', 'expired'),
    'approved but not claimed before its use-by');
  RETURN v_op;
END $$;

CREATE OR REPLACE FUNCTION tollgate_claim(p_tenant_id text, p_api_key_id text, p_principal text, p_tool text, p_key_digest text,
  p_fingerprint text, p_args jsonb, p_workflow_id text, p_trace_id text, p_new_id text, p_downstream_key text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_tool tool;
  v_op operation;
  v_approval approval;
  v_needs_approval boolean;
  v_token bigint;
BEGIN
  PERFORM 1 FROM api_key WHERE id = p_api_key_id AND tenant_id = p_tenant_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'unauthorized'); END IF;
  SELECT * INTO v_tool FROM tool WHERE tenant_id = p_tenant_id AND name = p_tool;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'tool-not-found'); END IF;
  v_needs_approval := v_tool.approval = 'required';

  FOR i IN 1..3 LOOP
    -- Insert-or-find: the unique index on the idempotency scope decides who creates the row.
    v_token := CASE WHEN v_needs_approval THEN NULL ELSE nextval('fencing_token_seq') END;
    INSERT INTO operation (id, tenant_id, principal, tool, key_digest, fingerprint, args, state, max_attempts, attempt_count,
      fencing_token, lease_expires_at, downstream_key, workflow_id, trace_id)
    VALUES (p_new_id, p_tenant_id, p_principal, p_tool, p_key_digest, p_fingerprint, p_args,
      CASE WHEN v_needs_approval THEN 'awaiting_approval' ELSE 'processing' END::operation_state, v_tool.max_attempts,
      CASE WHEN v_needs_approval THEN 0 ELSE 1 END, v_token,
      CASE WHEN v_needs_approval THEN NULL ELSE now() + make_interval(secs => v_tool.lease_seconds) END,
      p_downstream_key, p_workflow_id, p_trace_id)
    ON CONFLICT (tenant_id, principal, tool, key_digest) DO NOTHING
    RETURNING * INTO v_op;

    IF FOUND THEN
      IF v_needs_approval THEN
        INSERT INTO approval (id, tenant_id, operation_id, fingerprint, requested_by, expires_at)
        VALUES ('apr_' || replace(gen_random_uuid()::text, '-', ''), p_tenant_id, v_op.id, p_fingerprint, p_principal,
          now() + make_interval(secs => v_tool.approval_ttl_seconds))
        RETURNING * INTO v_approval;
        PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.claimed', v_op.id, NULL,
          jsonb_build_object('state', v_op.state, 'approvalId', v_approval.id), NULL);
        RETURN jsonb_build_object('code', 'awaiting-approval', 'op', tollgate_op_view(v_op),
          'approval', jsonb_build_object('id', v_approval.id, 'expiresAt', v_approval.expires_at));
      END IF;
      INSERT INTO attempt (id, tenant_id, operation_id, number, fencing_token, principal, api_key_id, lease_expires_at, workflow_id, trace_id)
      VALUES (tollgate_new_attempt_id(), p_tenant_id, v_op.id, 1, v_token, p_principal, p_api_key_id,
        v_op.lease_expires_at, p_workflow_id, p_trace_id);
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.claimed', v_op.id, NULL,
        jsonb_build_object('state', v_op.state, 'attempt', 1, 'fencingToken', v_token::text), NULL);
      RETURN tollgate_attempt_granted('created', v_op);
    END IF;

    SELECT * INTO v_op FROM operation
    WHERE tenant_id = p_tenant_id AND principal = p_principal AND tool = p_tool AND key_digest = p_key_digest
    FOR UPDATE;
    -- Pruned between our insert and our lock: go round and insert again.
    IF FOUND THEN EXIT; END IF;
  END LOOP;
  IF v_op.id IS NULL THEN RAISE EXCEPTION 'claim could not settle on an operation row'; END IF;

  IF v_op.fingerprint <> p_fingerprint THEN
    PERFORM tollgate_count_conflict(v_op.id, true);
    RETURN jsonb_build_object('code', 'idempotency-key-reused', 'op', tollgate_op_view(v_op), 'storedArgs', v_op.args);
  END IF;

  CASE v_op.state
  WHEN 'succeeded', 'failed' THEN
    -- A replay only bumps a counter: losing that increment in a crash is harmless, so skip the fsync
    -- wait. Not while an attempt a settle left open may still report: its agreeing
    -- complete stores its result only if no replay was served (replay_count = 0), so that count
    -- must survive a crash, or a later replay could differ from one already served.
    IF v_op.open_attempt_until IS NULL THEN
      SET LOCAL synchronous_commit = off;
    END IF;
    UPDATE operation SET replay_count = tollgate_count_up(replay_count), last_replay_at = now() WHERE id = v_op.id;
    RETURN jsonb_build_object('code', 'replay', 'op', tollgate_op_view(v_op));
  WHEN 'rejected' THEN
    RETURN jsonb_build_object('code', 'approval-rejected', 'op', tollgate_op_view(v_op));
  WHEN 'awaiting_approval' THEN
    SELECT * INTO v_approval FROM approval WHERE tenant_id = p_tenant_id AND operation_id = v_op.id;
    IF v_approval.expires_at <= now() AND v_approval.state = 'pending' THEN
      v_op := tollgate_expire_approval(v_op, v_approval);
      RETURN jsonb_build_object('code', 'approval-rejected', 'op', tollgate_op_view(v_op), 'expiredNow', true); -- [changed] this claim wrote the expiry
    END IF;
    RETURN jsonb_build_object('code', 'awaiting-approval', 'op', tollgate_op_view(v_op),
      'approval', jsonb_build_object('id', v_approval.id, 'expiresAt', v_approval.expires_at));
  WHEN 'unknown' THEN
    PERFORM tollgate_count_conflict(v_op.id, false);
    RETURN jsonb_build_object('code', 'outcome-unknown', 'op', tollgate_op_view(v_op));
  WHEN 'pending' THEN
    IF v_op.not_before IS NOT NULL AND v_op.not_before > now() THEN
      PERFORM tollgate_count_conflict(v_op.id, false);
      RETURN jsonb_build_object('code', 'retry-backoff', 'op', tollgate_op_view(v_op),
        'retryAfterMs', ceil(extract(epoch FROM v_op.not_before - now()) * 1000));
    END IF;
    -- An approved operation's first attempt: authorization again. The key was checked above
    -- (not revoked) and by the caller (allowed this tool); the approval must be 'approved' and
    -- bound to exactly these args. An operation created without approval has no row here.
    SELECT * INTO v_approval FROM approval WHERE tenant_id = p_tenant_id AND operation_id = v_op.id;
    -- [changed] A yes not acted on before its use-by no longer authorizes the first attempt: the
    -- operation is rejected as an expired approval's is. Only the first attempt (attempt_count 0):
    -- a retry of an attempt the yes already started follows the tool's retry policy.
    IF FOUND AND v_approval.state = 'approved' AND v_op.attempt_count = 0
      AND tollgate_approval_use_by(v_approval.decided_at, v_tool.approval_ttl_seconds) <= now() THEN
      v_op := tollgate_expire_unclaimed_approval(v_op, v_approval, v_tool.approval_ttl_seconds);
      RETURN jsonb_build_object('code', 'approval-rejected', 'op', tollgate_op_view(v_op), 'expiredNow', true);
    END IF;
    IF FOUND AND (v_approval.state <> 'approved' OR v_approval.fingerprint <> p_fingerprint) THEN
      RETURN jsonb_build_object('code', 'approval-mismatch', 'op', tollgate_op_view(v_op));
    END IF;
    v_op := tollgate_start_attempt(v_op, v_tool.lease_seconds, p_principal, p_api_key_id, p_workflow_id, p_trace_id);
    PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.attempt_started', v_op.id, jsonb_build_object('state', 'pending'),
      jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count, 'fencingToken', v_op.fencing_token::text), NULL);
    RETURN tollgate_attempt_granted('attempt', v_op);
  ELSE -- processing
    IF v_op.lease_expires_at > now() THEN
      PERFORM tollgate_count_conflict(v_op.id, false);
      RETURN jsonb_build_object('code', 'operation-in-progress', 'op', tollgate_op_view(v_op),
        'retryAfterMs', ceil(extract(epoch FROM v_op.lease_expires_at - now()) * 1000));
    END IF;
    IF v_tool.takeover = 'deduplicated' AND v_op.attempt_count < v_op.max_attempts THEN
      UPDATE attempt SET outcome = 'taken_over', ended_at = now()
      WHERE tenant_id = p_tenant_id AND operation_id = v_op.id AND fencing_token = v_op.fencing_token;
      UPDATE operation SET takeover_count = takeover_count + 1 WHERE id = v_op.id;
      v_op := tollgate_start_attempt(v_op, v_tool.lease_seconds, p_principal, p_api_key_id, p_workflow_id, p_trace_id);
      PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.taken_over', v_op.id,
        jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count - 1),
        jsonb_build_object('state', 'processing', 'attempt', v_op.attempt_count, 'fencingToken', v_op.fencing_token::text),
        'lease expired; takeover policy is deduplicated');
      RETURN tollgate_attempt_granted('takeover', v_op);
    END IF;
    -- Nobody can tell whether the expired attempt's effect happened: the outcome is unknown.
    v_op := tollgate_lease_expired_to_unknown(v_op, p_actor);
    RETURN jsonb_build_object('code', 'outcome-unknown', 'op', tollgate_op_view(v_op), 'becameUnknown', true);
  END CASE;
END $$;

CREATE OR REPLACE FUNCTION tollgate_decide_approval(p_tenant_id text, p_approval_id text, p_decision text, p_reason text,
  p_actor text, p_allowed_tools text[],
  p_decider_principal text DEFAULT NULL) -- an API key's principal; NULL for a person in the console
  RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
  v_approval approval;
  v_retention int;
BEGIN
  SELECT o.* INTO v_op FROM operation o JOIN approval a ON a.operation_id = o.id
  WHERE a.id = p_approval_id AND a.tenant_id = p_tenant_id AND o.tenant_id = p_tenant_id
  FOR UPDATE OF o;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'approval-not-found'); END IF;
  IF cardinality(p_allowed_tools) > 0 AND NOT (v_op.tool = ANY (p_allowed_tools)) THEN
    RETURN jsonb_build_object('code', 'forbidden');
  END IF;
  SELECT * INTO v_approval FROM approval WHERE id = p_approval_id FOR UPDATE;
  IF v_approval.state = 'expired' THEN
    -- Expired by the sweep, a claim or an earlier decision: the same answer as the first one got.
    RETURN jsonb_build_object('code', 'approval-expired', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  IF v_approval.state <> 'pending' THEN
    RETURN jsonb_build_object('code', 'approval-already-decided', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  IF v_approval.expires_at <= now() THEN
    v_op := tollgate_expire_approval(v_op, v_approval);
    SELECT * INTO v_approval FROM approval WHERE id = p_approval_id;
    -- [changed] 'expiredNow': this decision wrote the expiry, so it is counted here; one found
    -- already expired (above) answers the same code without it, counted where it was written.
    RETURN jsonb_build_object('code', 'approval-expired', 'approval', tollgate_approval_view(v_approval, v_op), 'expiredNow', true);
  END IF;
  IF v_op.state <> 'awaiting_approval' OR v_op.fingerprint <> v_approval.fingerprint THEN
    -- Cannot happen through Tollgate's own writes; refuse rather than approve something else.
    RETURN jsonb_build_object('code', 'approval-already-decided', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  -- A second party says yes: the principal whose claim asked for the approval (any of
  -- its keys, an admin key too) cannot approve it. Rejecting it is withdrawing the request.
  IF p_decision = 'approve' AND p_decider_principal IS NOT NULL AND p_decider_principal = v_approval.requested_by THEN
    RETURN jsonb_build_object('code', 'requester-cannot-approve', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;

  UPDATE approval SET state = CASE WHEN p_decision = 'approve' THEN 'approved' ELSE 'rejected' END::approval_state,
    decided_by = p_actor, decided_at = now(), reason = p_reason
  WHERE id = p_approval_id RETURNING * INTO v_approval;
  IF p_decision = 'approve' THEN
    UPDATE operation SET state = 'pending', not_before = NULL, updated_at = now() WHERE id = v_op.id RETURNING * INTO v_op;
  ELSE
    SELECT result_retention_hours INTO v_retention FROM tool WHERE tenant_id = p_tenant_id AND name = v_op.tool;
    UPDATE operation SET state = 'rejected', completed_at = now(), updated_at = now(),
      error = jsonb_build_object('code', 'approval-rejected', 'message', p_reason),
      result_expires_at = now() + make_interval(hours => coalesce(v_retention, 24))
    WHERE id = v_op.id RETURNING * INTO v_op;
  END IF;
  PERFORM tollgate_audit(p_tenant_id, p_actor, CASE WHEN p_decision = 'approve' THEN 'approval.approved' ELSE 'approval.rejected' END,
    v_op.id, jsonb_build_object('state', 'awaiting_approval', 'approvalId', v_approval.id),
    jsonb_build_object('state', v_op.state, 'approvalId', v_approval.id), p_reason);
  RETURN jsonb_build_object('code', 'decided', 'approval', tollgate_approval_view(v_approval, v_op));
END $$;

-- The worker's sweep: expires up to p_limit overdue approvals. SKIP LOCKED: rows a claim or a
-- decision holds are theirs to settle, and two sweepers never wait on (or expire) the same row.
CREATE OR REPLACE FUNCTION tollgate_expire_approvals(p_limit int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_row record;
  v_op operation;
  v_approval approval;
  v_count int := 0;
BEGIN
  FOR v_row IN
    SELECT o.id AS op_id, a.id AS approval_id FROM approval a JOIN operation o ON o.id = a.operation_id
    WHERE a.state = 'pending' AND a.expires_at <= now() AND o.state = 'awaiting_approval'
    ORDER BY a.expires_at LIMIT p_limit
    FOR UPDATE OF o, a SKIP LOCKED
  LOOP
    SELECT * INTO v_op FROM operation WHERE id = v_row.op_id;
    SELECT * INTO v_approval FROM approval WHERE id = v_row.approval_id;
    PERFORM tollgate_expire_approval(v_op, v_approval);
    v_count := v_count + 1;
  END LOOP;
  -- [changed] Then yeses past their use-by that no claim came for. Driven from the few 'pending'
  -- operations (the index on operation (state, result_expires_at)), not from every approved
  -- approval ever kept; attempt_count 0 is "approved, never attempted".
  FOR v_row IN
    SELECT o.id AS op_id, a.id AS approval_id, t.approval_ttl_seconds AS ttl
    FROM operation o
    JOIN approval a ON a.tenant_id = o.tenant_id AND a.operation_id = o.id
    JOIN tool t ON t.tenant_id = o.tenant_id AND t.name = o.tool
    WHERE o.state = 'pending' AND o.attempt_count = 0 AND a.state = 'approved'
      AND tollgate_approval_use_by(a.decided_at, t.approval_ttl_seconds) <= now()
    ORDER BY a.decided_at LIMIT p_limit - v_count
    FOR UPDATE OF o, a SKIP LOCKED
  LOOP
    SELECT * INTO v_op FROM operation WHERE id = v_row.op_id;
    SELECT * INTO v_approval FROM approval WHERE id = v_row.approval_id;
    PERFORM tollgate_expire_unclaimed_approval(v_op, v_approval, v_row.ttl);
    v_count := v_count + 1;
  END LOOP;
  RETURN v_count;
END $$;
