-- One row: an HMAC of the string "tollgate-secret-key-check-v1" under TOLLGATE_SECRET_KEY, written
-- by the first `npm start` or `npm run worker` against this database. Every later one compares:
-- a process with another key (a worker container started without the variable generates its own)
-- would open no stored secret, sign nothing a subscriber accepts and derive other downstream keys,
-- so it refuses to start instead. Not the key itself: an HMAC reveals nothing of it.
CREATE TABLE "secret_key_check" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "digest" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "secret_key_check_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "secret_key_check_one_row" CHECK ("id" = 1)
);
