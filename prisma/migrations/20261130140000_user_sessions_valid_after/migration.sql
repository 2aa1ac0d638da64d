-- Console sessions signed in before this time are refused. Set when a user is disabled: the
-- session token (a JWT, valid up to TOLLGATE_SESSION_HOURS) carries only the user id and its
-- sign-in time, and re-enabling a user must not bring back a session stolen before the disable.
ALTER TABLE "app_user" ADD COLUMN "sessions_valid_after" TIMESTAMPTZ(3);
