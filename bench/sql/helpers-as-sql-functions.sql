-- The helpers as they were before migration 20261130060000 (LANGUAGE sql, parsed and planned in
-- every transaction that calls them), for `npm run bench -- floor-ab --sql <this file>`.
CREATE OR REPLACE FUNCTION tollgate_audit(p_tenant_id text, p_actor text, p_action text, p_op_id text, p_before jsonb, p_after jsonb, p_reason text)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (p_tenant_id, p_actor, p_action, 'operation', p_op_id, p_before, p_after, p_reason)
$$;

CREATE OR REPLACE FUNCTION tollgate_count_conflict(p_op_id text, p_mismatch boolean) RETURNS void LANGUAGE sql AS $$
  UPDATE operation SET conflict_count = conflict_count + 1, mismatch_count = mismatch_count + (CASE WHEN p_mismatch THEN 1 ELSE 0 END),
    last_conflict_at = now()
  WHERE id = p_op_id
$$;

CREATE OR REPLACE FUNCTION tollgate_event_subscribers(p_tenant_id text, p_type text) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT array_agg(id ORDER BY id) FROM event_subscription
  WHERE tenant_id = p_tenant_id AND disabled_at IS NULL AND p_type = ANY (events)
$$;

CREATE OR REPLACE FUNCTION tollgate_webhook_event_audit(e webhook_event, p_actor text, p_action text, p_before jsonb, p_after jsonb, p_reason text)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (e.tenant_id, p_actor, p_action, 'webhook_event', e.id, p_before, p_after, p_reason)
$$;
