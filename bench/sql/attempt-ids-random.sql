-- Attempt ids random again, as before migration 20261130180002 ('att_' and a UUID's 32 hex
-- digits): `npm run bench -- floor-ab --sql bench/sql/attempt-ids-random.sql --seed 1000000 --scenarios claim-new`
-- measures that migration in reverse ("after" is the random ids).
CREATE OR REPLACE FUNCTION tollgate_new_attempt_id() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT 'att_' || replace(gen_random_uuid()::text, '-', '')
$$;
