-- Console password sign-ins: five failures for one email within 15 minutes lock it for 30 s, doubling
-- with each further failure up to 15 minutes (lib/auth/sign-in-throttle.ts); a success clears it.
-- CreateTable
CREATE TABLE "sign_in_failure" (
    "email_digest" TEXT NOT NULL,
    "failures" INTEGER NOT NULL,
    "last_failure_at" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),

    CONSTRAINT "sign_in_failure_pkey" PRIMARY KEY ("email_digest")
);
