-- Console sessions carry the generation their user had when they signed in; disabling a user
-- bumps it, so every session from before is refused for good, even after the user is enabled
-- again. A counter, not a time: the session (a JWT) and the disable may come from different app
-- instances, whose clocks differ.
ALTER TABLE "app_user" ADD COLUMN "session_generation" INTEGER NOT NULL DEFAULT 0;
