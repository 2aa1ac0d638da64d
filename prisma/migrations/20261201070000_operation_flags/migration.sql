-- Flagged operations (evidence that contradicts the recorded outcome: a webhook, an agent's late or
-- second report) were visible only on their own trace, and a flag could never be taken down
-- (console review). The operations list filters by them through this index (a handful of rows;
-- only in SQL, as Prisma cannot declare a partial index), and an operator who checked clears a
-- flag with a reason.
CREATE INDEX "operation_flagged_idx" ON "operation" ("tenant_id", "created_at") WHERE "flagged_at" IS NOT NULL;

-- Clears an operation's flag, compare-and-set on the flag the operator read (p_flagged_at): a flag
-- raised again while the dialog was open is not cleared unseen. Audited with the flag it took down.
CREATE FUNCTION tollgate_clear_flag(p_tenant_id text, p_op_id text, p_flagged_at timestamptz, p_reason text, p_actor text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_op operation;
BEGIN
  SELECT * INTO v_op FROM operation WHERE id = p_op_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'operation-not-found'); END IF;
  IF v_op.flagged_at IS NULL THEN RETURN jsonb_build_object('code', 'not-flagged'); END IF;
  IF v_op.flagged_at <> p_flagged_at THEN
    RETURN jsonb_build_object('code', 'flag-changed', 'flagReason', v_op.flag_reason, 'flaggedAt', v_op.flagged_at);
  END IF;
  UPDATE operation SET flagged_at = NULL, flag_reason = NULL, updated_at = now() WHERE id = v_op.id;
  PERFORM tollgate_audit(p_tenant_id, p_actor, 'operation.flag_cleared', v_op.id,
    jsonb_build_object('flaggedAt', v_op.flagged_at, 'flagReason', v_op.flag_reason, 'state', v_op.state),
    jsonb_build_object('flaggedAt', NULL, 'state', v_op.state), p_reason);
  RETURN jsonb_build_object('code', 'cleared');
END $$;
