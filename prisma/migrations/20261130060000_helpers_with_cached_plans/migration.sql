-- The hot path's small helpers, rewritten from LANGUAGE sql to plpgsql with the same signature
-- and the same statement. Why: a SQL function that PostgreSQL cannot inline (one whose body is
-- an INSERT or an UPDATE, or a SELECT with a FROM) is parsed and planned again in every
-- transaction that calls it, while plpgsql keeps its statements' plans for the life of the
-- connection. Measured with the pg floor (bench/README.md, "Cached plans for the helpers"):
-- PostgreSQL's CPU per complete fell by about a tenth, per 409 by about an eighth.
-- Helpers whose body is a single SELECT of expressions (tollgate_op_view, …) are inlined into
-- the caller's plan and stay LANGUAGE sql.

CREATE OR REPLACE FUNCTION tollgate_audit(p_tenant_id text, p_actor text, p_action text, p_op_id text, p_before jsonb, p_after jsonb, p_reason text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (p_tenant_id, p_actor, p_action, 'operation', p_op_id, p_before, p_after, p_reason);
END $$;

CREATE OR REPLACE FUNCTION tollgate_count_conflict(p_op_id text, p_mismatch boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE operation SET conflict_count = conflict_count + 1, mismatch_count = mismatch_count + (CASE WHEN p_mismatch THEN 1 ELSE 0 END),
    last_conflict_at = now()
  WHERE id = p_op_id;
END $$;

-- Called by the outbox triggers on every completion, resolution and unmatched webhook event.
CREATE OR REPLACE FUNCTION tollgate_event_subscribers(p_tenant_id text, p_type text) RETURNS text[] LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT array_agg(id ORDER BY id) FROM event_subscription
    WHERE tenant_id = p_tenant_id AND disabled_at IS NULL AND p_type = ANY (events));
END $$;

CREATE OR REPLACE FUNCTION tollgate_webhook_event_audit(e webhook_event, p_actor text, p_action text, p_before jsonb, p_after jsonb, p_reason text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (e.tenant_id, p_actor, p_action, 'webhook_event', e.id, p_before, p_after, p_reason);
END $$;
