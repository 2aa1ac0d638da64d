-- From a review of the console (2026-12-03): an approval's page shows the operation's flag (a
-- provider's event that says the action happened already, for one) beside "check with the provider
-- first", but the decision did not say which flag the person saw. A flag raised after the page
-- loaded was approved over, unseen, and the agent's next claim ran the tool. The console now sends
-- the flag it showed (as a resolve, a match and a flag's clearing do), and a yes is refused if the
-- operation's flag is another one.
--
-- tollgate_decide_approval (from 20261202180000_approval_use_by) takes two more parameters, so it
-- is dropped and created again whole; only the parts marked [changed] differ. Earlier [changed]
-- marks are taken out.

DROP FUNCTION tollgate_decide_approval(text, text, text, text, text, text[], text);

CREATE FUNCTION tollgate_decide_approval(p_tenant_id text, p_approval_id text, p_decision text, p_reason text,
  p_actor text, p_allowed_tools text[],
  p_decider_principal text DEFAULT NULL, -- an API key's principal; NULL for a person in the console
  -- [changed] The flag the console showed on the operation (p_seen_flagged_at, NULL for none),
  -- when p_seen_flag_known: a yes is refused if the operation's flag is another one.
  p_seen_flag_known boolean DEFAULT false,
  p_seen_flagged_at timestamptz DEFAULT NULL)
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
    -- 'expiredNow': this decision wrote the expiry, so it is counted here; one found
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

  -- [changed] A yes lets the agent's next claim run the tool; the page asking for it shows the
  -- operation's flag (a provider's event saying it happened already, say) to be checked first. A
  -- flag raised (or changed) since the person looked is refused, as a resolve is, so they read it
  -- before deciding. A no runs nothing and needs no such check.
  IF p_decision = 'approve' AND p_seen_flag_known AND v_op.flagged_at IS DISTINCT FROM p_seen_flagged_at THEN
    RETURN jsonb_build_object('code', 'operation-changed', 'changed', 'flag', 'approval', tollgate_approval_view(v_approval, v_op),
      'flagged', v_op.flagged_at IS NOT NULL);
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
