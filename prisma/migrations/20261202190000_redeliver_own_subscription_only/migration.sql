-- From a review of event subscriptions (2026-12-02): a subscription put again after a DELETE is
-- the same row (same id; lib/event-subscriptions/put-event-subscription.ts sets created_at anew,
-- with a new secret), so it inherited the old subscription's dead deliveries, and a redeliver sent
-- them to the new endpoint: "pager" on URL X for operation.*, deleted, then put again on URL Y for
-- approval.requested only, and Y was sent operation results it never subscribed to. A redeliver
-- now refuses (409) a delivery made before its subscription's created_at (made for an earlier
-- subscription of this name), and one whose event type the subscription no longer subscribes to
-- (replaced with other events): the subscription as it stands is what its endpoint asked for,
-- as it is for new events. A replaced URL alone still redelivers: fixing a broken endpoint and
-- sending again is what redelivery is for. lib/outbox/list-deliveries.ts offers Redeliver on the
-- console on the same conditions.

--
-- A delivery's created_at is now the clock's time at its insert, not its transaction's start
-- (now()): an emitting transaction that began before a subscription was created (or put again)
-- and read it once committed stamped its delivery earlier than the subscription, and the rule
-- above refused that delivery's redelivery as one for an earlier subscription (last read). The
-- insert comes after the read that found the subscription, so after it was committed.

-- tollgate_redeliver (from 20261202170000_redelivery_keeps_its_event) and tollgate_emit_event
-- (from 20261129223546_side_effects_outbox_worker) re-declared whole; only the parts marked
-- [changed] differ. The earlier [changed] marks are taken out. tollgate_redeliver_block is new.
CREATE OR REPLACE FUNCTION tollgate_emit_event(p_tenant_id text, p_type text, p_data jsonb, p_subscribers text[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_event_id text := 'msg_' || replace(gen_random_uuid()::text, '-', '');
  v_delivery_id text;
  v_sub text;
BEGIN
  IF p_subscribers IS NULL OR cardinality(p_subscribers) = 0 THEN RETURN NULL; END IF;
  INSERT INTO outbox_event (id, tenant_id, type, payload) VALUES (v_event_id, p_tenant_id, p_type, p_data);
  FOREACH v_sub IN ARRAY p_subscribers LOOP
    v_delivery_id := 'dlv_' || replace(gen_random_uuid()::text, '-', '');
    INSERT INTO event_delivery (id, tenant_id, event_id, subscription_id, next_attempt_at, created_at) -- [changed] created_at
    VALUES (v_delivery_id, p_tenant_id, v_event_id, v_sub, now(), clock_timestamp());
    PERFORM tollgate_enqueue_delivery(v_delivery_id, now());
  END LOOP;
  RETURN v_event_id;
END $$;

-- Why a delivery cannot be redelivered, or NULL when it can: one rule for tollgate_redeliver and
-- the console's list (lib/outbox/list-deliveries.ts), which offers the button on the same terms.
-- A subscription row that is not there (NULL) counts as removed.
CREATE FUNCTION tollgate_redeliver_block(p_d event_delivery, p_s event_subscription, p_type text) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_s.id IS NULL OR p_s.disabled_at IS NOT NULL THEN 'subscription-removed'
    -- Made before the subscription's created_at: for an earlier subscription of this name, since
    -- removed (a PUT of a removed name reuses its row and sets created_at anew). Its endpoint is
    -- not the one now under the name, which never asked for this event.
    WHEN p_d.created_at < p_s.created_at THEN 'earlier-subscription'
    -- An event type the subscription no longer subscribes to (replaced with other events): its
    -- endpoint said it does not want these any more, and new ones of the type are not sent.
    WHEN NOT coalesce(p_type = ANY (p_s.events), false) THEN 'not-subscribed' END
$$;

CREATE OR REPLACE FUNCTION tollgate_redeliver(p_tenant_id text, p_delivery_id text, p_actor text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_d event_delivery;
  v_s event_subscription; -- [changed] the subscription's row, for its created_at and events
  v_type text; -- [changed] the event's type, to be judged against the subscription's events
  v_block text; -- [changed]
BEGIN
  -- The event first: `tollgate prune` takes old events FOR UPDATE SKIP LOCKED, so it passes over
  -- this one now, or (if it holds it already) deletes it before this goes on and the delivery is
  -- gone below. Locked the other way round, prune's cascade could delete the delivery this makes
  -- pending, or the two could deadlock. Locked for the write below (redelivered_at), not
  -- share-locked: two redelivers of one event's deliveries would each hold a share lock and
  -- wait for the other to upgrade it.
  PERFORM 1 FROM outbox_event e JOIN event_delivery d ON d.event_id = e.id
  WHERE d.id = p_delivery_id AND d.tenant_id = p_tenant_id FOR NO KEY UPDATE OF e;
  SELECT * INTO v_d FROM event_delivery WHERE id = p_delivery_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_d.state = 'pending' THEN RETURN jsonb_build_object('code', 'invalid-state', 'state', v_d.state); END IF;
  -- Nothing can reach a removed subscription: a redelivery reset the tries and died at
  -- once (newcomer review). Share-locked, so a removal (or a replace, or a PUT that creates it
  -- again) waits until this is done. [changed] Judged by tollgate_redeliver_block, as the
  -- console's list judges it: removed, made for an earlier subscription of the name, or of an
  -- event type it no longer subscribes to.
  SELECT * INTO v_s FROM event_subscription WHERE id = v_d.subscription_id FOR SHARE;
  SELECT type INTO v_type FROM outbox_event WHERE id = v_d.event_id;
  v_block := tollgate_redeliver_block(v_d, v_s, v_type);
  IF v_block IS NOT NULL THEN
    RETURN jsonb_build_object('code', v_block, 'state', v_d.state)
      || CASE WHEN v_block = 'not-subscribed' THEN jsonb_build_object('type', v_type) ELSE '{}'::jsonb END;
  END IF;
  -- A prune whose statement began before this commits judged "no delivery pending" on its older
  -- snapshot, and a lock leaves no new row version for its FOR UPDATE to re-check; the
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
