-- From a review (2026-12-02): the key (or principal) whose claim asked for an approval could
-- approve it itself through POST /api/v1/approvals/{id}/decision: an admin key claims a tool that
-- needs approval, then approves its own request, and the audit log shows an approval nobody else
-- gave. A decision by API key now carries the key's principal, and an approve from the requesting
-- principal is refused (403, nothing stored). A person in the console is never a principal.
--
-- tollgate_decide_approval (from 20261130220000_late_reports_after_settle), re-declared whole with
-- one more parameter; only the parts marked [changed] differ.
DROP FUNCTION tollgate_decide_approval(text, text, text, text, text, text[]);

CREATE FUNCTION tollgate_decide_approval(p_tenant_id text, p_approval_id text, p_decision text, p_reason text,
  p_actor text, p_allowed_tools text[],
  p_decider_principal text DEFAULT NULL) -- [changed] an API key's principal; NULL for a person in the console
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
    RETURN jsonb_build_object('code', 'approval-expired', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  IF v_op.state <> 'awaiting_approval' OR v_op.fingerprint <> v_approval.fingerprint THEN
    -- Cannot happen through Tollgate's own writes; refuse rather than approve something else.
    RETURN jsonb_build_object('code', 'approval-already-decided', 'approval', tollgate_approval_view(v_approval, v_op));
  END IF;
  -- [changed] A second party says yes: the principal whose claim asked for the approval (any of
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
