-- From a review of the worker (2026-12-02): `tollgate prune` could delete a delivery an operator
-- had just redelivered. Prune's statement judges "no delivery of this event is pending" on the
-- snapshot it began with; a redeliver that committed after that, before prune reached the event,
-- had only share-locked the event row, which leaves nothing for prune's FOR UPDATE to re-check:
-- the event was deleted, and with it (ON DELETE CASCADE) the delivery now pending. A redelivery
-- now writes the event's redelivered_at, and prune keeps events redelivered within the
-- retention: a condition on the locked row, which PostgreSQL re-checks on its newest version.
ALTER TABLE "outbox_event" ADD COLUMN "redelivered_at" TIMESTAMPTZ(3);

-- tollgate_redeliver (from 20261201080000_redeliver_needs_subscription) re-declared whole; only
-- the parts marked [changed] differ. The earlier [changed] mark is taken out.
CREATE OR REPLACE FUNCTION tollgate_redeliver(p_tenant_id text, p_delivery_id text, p_actor text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_d event_delivery;
BEGIN
  -- The event first: `tollgate prune` takes old events FOR UPDATE SKIP LOCKED, so it passes over
  -- this one now, or (if it holds it already) deletes it before this goes on and the delivery is
  -- gone below. Locked the other way round, prune's cascade could delete the delivery this makes
  -- pending, or the two could deadlock. [changed] Locked for the write below (redelivered_at), not
  -- share-locked: two redelivers of one event's deliveries would each hold a share lock and
  -- wait for the other to upgrade it.
  PERFORM 1 FROM outbox_event e JOIN event_delivery d ON d.event_id = e.id
  WHERE d.id = p_delivery_id AND d.tenant_id = p_tenant_id FOR NO KEY UPDATE OF e;
  SELECT * INTO v_d FROM event_delivery WHERE id = p_delivery_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_d.state = 'pending' THEN RETURN jsonb_build_object('code', 'invalid-state', 'state', v_d.state); END IF;
  -- Nothing can reach a removed subscription: a redelivery reset the tries and died at
  -- once (newcomer review). Share-locked, so a removal waits until this is done.
  PERFORM 1 FROM event_subscription WHERE id = v_d.subscription_id AND disabled_at IS NULL FOR SHARE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'subscription-removed', 'state', v_d.state); END IF;
  -- [changed] A prune whose statement began before this commits judged "no delivery pending" on
  -- its older snapshot, and a lock leaves no new row version for its FOR UPDATE to re-check; the
  -- redelivery's time, re-checked on the row itself, keeps the event (and this delivery).
  UPDATE outbox_event SET redelivered_at = now() WHERE id = v_d.event_id;
  UPDATE event_delivery SET state = 'pending', attempts = 0, window_started_at = NULL, next_attempt_at = now(),
    dead_at = NULL, delivered_at = NULL
  WHERE id = p_delivery_id;
  PERFORM tollgate_enqueue_delivery(p_delivery_id, now());
  INSERT INTO audit_event (tenant_id, actor, action, target_type, target_id, before, after, reason)
  VALUES (p_tenant_id, p_actor, 'event_delivery.redelivered', 'event_delivery', p_delivery_id,
    jsonb_build_object('state', v_d.state, 'attempts', v_d.attempts, 'eventId', v_d.event_id, 'lastStatus', v_d.last_status),
    jsonb_build_object('state', 'pending', 'eventId', v_d.event_id), NULL);
  RETURN jsonb_build_object('code', 'redelivered', 'previousState', v_d.state);
END $$;
