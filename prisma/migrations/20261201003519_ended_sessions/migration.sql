-- Signing out of the console ends that session for good: its id (the JWT's sid) is refused until
-- the JWT would have expired (lib/auth/console-user.ts), then pruned by `prune` (lib/auth/ended-sessions.ts).
-- CreateTable
CREATE TABLE "ended_session" (
    "sid" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "ended_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ended_session_pkey" PRIMARY KEY ("sid")
);

-- CreateIndex
CREATE INDEX "ended_session_expires_at_idx" ON "ended_session"("expires_at");

-- AddForeignKey
ALTER TABLE "ended_session" ADD CONSTRAINT "ended_session_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "app_user"("id") ON DELETE CASCADE ON UPDATE CASCADE;
