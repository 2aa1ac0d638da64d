-- AlterTable
ALTER TABLE "event_delivery" ADD COLUMN     "dead_at" TIMESTAMPTZ(3),
ADD COLUMN     "next_attempt_at" TIMESTAMPTZ(3),
ADD COLUMN     "window_started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateIndex
CREATE INDEX "event_delivery_state_next_attempt_at_idx" ON "event_delivery"("state", "next_attempt_at");
