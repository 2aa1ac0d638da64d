-- Three mends to the outbox (a fourth, a subscription secret the worker cannot open, is in
-- lib/outbox/deliver-event.ts).

-- ---------------------------------------------------------------------------------------------
-- approval.decided reports the operation as the decision left it. The decision and the expiry
-- write the approval row first and the operation row next, and the trigger read the operation
-- at the end of the approval's UPDATE: every event said "awaiting_approval", error null, and
-- no event ever showed an approved operation pending. Deferred to the end of the transaction,
-- the trigger reads the operation as the transaction commits it, whoever writes the two rows and
-- in whatever order. It still runs inside that transaction (a rollback leaves no event).
DROP TRIGGER approval_decided_events ON approval;
CREATE CONSTRAINT TRIGGER approval_decided_events AFTER UPDATE OF state ON approval
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.state = 'pending' AND NEW.state <> 'pending')
  EXECUTE FUNCTION tollgate_approval_events();

-- ---------------------------------------------------------------------------------------------
-- A delivery's retry window starts at its first try, not when the row was written: after a day
-- without a worker, the first try that failed used to mark the delivery dead at once.
-- NULL until the first try; a redeliver clears it, so its window starts at its own first try.
ALTER TABLE "event_delivery" ALTER COLUMN "window_started_at" DROP NOT NULL,
ALTER COLUMN "window_started_at" DROP DEFAULT;

-- Rows never tried have no window yet (their value was the time they were written or
-- redelivered). Rows tried already keep theirs: the first try's time was not recorded, and
-- the old value, no later than it, is the window they have been retried under.
UPDATE event_delivery SET window_started_at = NULL WHERE attempts = 0;

-- As before, but the window opens on the first failed try if no try opened it.
CREATE OR REPLACE FUNCTION tollgate_delivery_failed(p_id text, p_status int, p_error text, p_base_ms int, p_cap_ms int,
  p_window_seconds int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_d event_delivery;
  v_window_start timestamptz;
  v_delay_ms double precision;
  v_next timestamptz;
BEGIN
  SELECT * INTO v_d FROM event_delivery WHERE id = p_id FOR UPDATE;
  IF NOT FOUND OR v_d.state <> 'pending' THEN RETURN jsonb_build_object('code', 'not-pending'); END IF;
  v_window_start := coalesce(v_d.window_started_at, now());
  v_delay_ms := least(p_cap_ms::double precision, p_base_ms * power(2::double precision, least(v_d.attempts, 40)));
  v_delay_ms := v_delay_ms / 2 + random() * v_delay_ms / 2;
  v_next := now() + make_interval(secs => v_delay_ms / 1000.0);
  IF v_next > v_window_start + make_interval(secs => p_window_seconds) THEN
    UPDATE event_delivery SET state = 'dead', attempts = attempts + 1, last_attempt_at = now(), last_status = p_status,
      last_error = left(p_error, 2000), next_attempt_at = NULL, dead_at = now(), window_started_at = v_window_start
    WHERE id = p_id;
    RETURN jsonb_build_object('code', 'dead');
  END IF;
  UPDATE event_delivery SET attempts = attempts + 1, last_attempt_at = now(), last_status = p_status,
    last_error = left(p_error, 2000), next_attempt_at = v_next, window_started_at = v_window_start
  WHERE id = p_id;
  PERFORM tollgate_enqueue_delivery(p_id, v_next);
  RETURN jsonb_build_object('code', 'retry', 'nextAttemptAt', v_next);
END $$;

-- As before, but the fresh window opens at the redelivery's first try, not at the click; and
-- the event is share-locked first, so a `tollgate prune` racing the redeliver over a month-old
-- dead delivery cannot cascade into the delivery this makes pending.
CREATE OR REPLACE FUNCTION tollgate_redeliver(p_tenant_id text, p_delivery_id text, p_actor text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_d event_delivery;
BEGIN
  -- The event first, share-locked: `tollgate prune` takes old events FOR UPDATE SKIP LOCKED, so
  -- it passes over this one now, or (if it holds it already) deletes it before this goes on and
  -- the delivery is gone below. Locked the other way round, prune's cascade could delete the
  -- delivery this makes pending, or the two could deadlock.
  PERFORM 1 FROM outbox_event e JOIN event_delivery d ON d.event_id = e.id
  WHERE d.id = p_delivery_id AND d.tenant_id = p_tenant_id FOR SHARE OF e;
  SELECT * INTO v_d FROM event_delivery WHERE id = p_delivery_id AND tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN RETURN jsonb_build_object('code', 'not-found'); END IF;
  IF v_d.state = 'pending' THEN RETURN jsonb_build_object('code', 'invalid-state', 'state', v_d.state); END IF;
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
