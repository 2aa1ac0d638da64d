-- CreateEnum
CREATE TYPE "webhook_scheme" AS ENUM ('standard_webhooks', 'stripe');

-- CreateEnum
CREATE TYPE "webhook_event_status" AS ENUM ('matched', 'unmatched', 'unmapped', 'contradicting', 'ignored');

-- CreateEnum
CREATE TYPE "side_effect_state" AS ENUM ('intended', 'sent', 'confirmed', 'failed', 'unknown');

-- CreateEnum
CREATE TYPE "delivery_state" AS ENUM ('pending', 'delivered', 'dead');

-- AlterTable
ALTER TABLE "operation" ADD COLUMN     "next_probe_at" TIMESTAMPTZ(3),
ADD COLUMN     "probe_count" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "tool" ADD COLUMN     "probe" JSONB;

-- CreateTable
CREATE TABLE "webhook_connection" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "scheme" "webhook_scheme" NOT NULL,
    "secrets_encrypted" TEXT[],
    "tolerance_seconds" INTEGER NOT NULL DEFAULT 300,
    "correlation_path" TEXT NOT NULL,
    "outcomes" JSONB NOT NULL,
    "payload_retention_days" INTEGER NOT NULL DEFAULT 30,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_connection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_event" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "provider_event_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" JSONB,
    "payload_pruned_at" TIMESTAMPTZ(3),
    "correlation_value" TEXT,
    "status" "webhook_event_status" NOT NULL,
    "outcome" TEXT,
    "operation_id" TEXT,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "reason" TEXT,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "side_effect" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "downstream_key" TEXT NOT NULL,
    "state" "side_effect_state" NOT NULL,
    "provider_request_id" TEXT,
    "provider_resource_id" TEXT,
    "attempt_number" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "side_effect_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_subscription" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "secret_encrypted" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),

    CONSTRAINT "event_subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_event" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbox_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_delivery" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "state" "delivery_state" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_attempt_at" TIMESTAMPTZ(3),
    "last_status" INTEGER,
    "last_error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_delivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhook_connection_tenant_id_name_key" ON "webhook_connection"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "webhook_event_tenant_id_status_received_at_idx" ON "webhook_event"("tenant_id", "status", "received_at");

-- CreateIndex
CREATE INDEX "webhook_event_tenant_id_operation_id_idx" ON "webhook_event"("tenant_id", "operation_id");

-- CreateIndex
CREATE INDEX "webhook_event_received_at_idx" ON "webhook_event"("received_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_event_connection_id_provider_event_id_key" ON "webhook_event"("connection_id", "provider_event_id");

-- CreateIndex
CREATE UNIQUE INDEX "side_effect_tenant_id_operation_id_name_key" ON "side_effect"("tenant_id", "operation_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "side_effect_tenant_id_downstream_key_key" ON "side_effect"("tenant_id", "downstream_key");

-- CreateIndex
CREATE UNIQUE INDEX "event_subscription_tenant_id_name_key" ON "event_subscription"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "outbox_event_tenant_id_created_at_idx" ON "outbox_event"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "event_delivery_tenant_id_state_created_at_idx" ON "event_delivery"("tenant_id", "state", "created_at");

-- CreateIndex
CREATE INDEX "event_delivery_subscription_id_created_at_idx" ON "event_delivery"("subscription_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "event_delivery_event_id_subscription_id_key" ON "event_delivery"("event_id", "subscription_id");

-- AddForeignKey
ALTER TABLE "webhook_connection" ADD CONSTRAINT "webhook_connection_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_event" ADD CONSTRAINT "webhook_event_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "webhook_connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "side_effect" ADD CONSTRAINT "side_effect_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_subscription" ADD CONSTRAINT "event_subscription_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_delivery" ADD CONSTRAINT "event_delivery_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "outbox_event"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_delivery" ADD CONSTRAINT "event_delivery_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "event_subscription"("id") ON DELETE CASCADE ON UPDATE CASCADE;
