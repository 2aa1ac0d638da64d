-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "api_key_role" AS ENUM ('agent', 'approver', 'admin');

-- CreateEnum
CREATE TYPE "takeover_policy" AS ENUM ('never', 'deduplicated');

-- CreateEnum
CREATE TYPE "approval_policy" AS ENUM ('none', 'required');

-- CreateEnum
CREATE TYPE "operation_state" AS ENUM ('awaiting_approval', 'pending', 'processing', 'succeeded', 'failed', 'unknown', 'rejected');

-- CreateEnum
CREATE TYPE "attempt_outcome" AS ENUM ('succeeded', 'failed', 'retryable_failure', 'unknown', 'lease_lost', 'taken_over');

-- CreateEnum
CREATE TYPE "approval_state" AS ENUM ('pending', 'approved', 'rejected', 'expired');

-- CreateTable
CREATE TABLE "tenant" (
    "id" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_key" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "principal" TEXT NOT NULL,
    "role" "api_key_role" NOT NULL,
    "tools" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "read_only_hint" BOOLEAN NOT NULL DEFAULT false,
    "destructive_hint" BOOLEAN NOT NULL DEFAULT true,
    "idempotent_hint" BOOLEAN NOT NULL DEFAULT false,
    "open_world_hint" BOOLEAN NOT NULL DEFAULT true,
    "lease_seconds" INTEGER NOT NULL DEFAULT 30,
    "max_attempts" INTEGER NOT NULL DEFAULT 3,
    "backoff_base_ms" INTEGER NOT NULL DEFAULT 1000,
    "backoff_cap_ms" INTEGER NOT NULL DEFAULT 60000,
    "takeover" "takeover_policy" NOT NULL DEFAULT 'never',
    "approval" "approval_policy" NOT NULL DEFAULT 'none',
    "approval_ttl_seconds" INTEGER NOT NULL DEFAULT 86400,
    "result_retention_hours" INTEGER NOT NULL DEFAULT 24,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operation" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "principal" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "key_digest" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "args" JSONB NOT NULL,
    "state" "operation_state" NOT NULL,
    "max_attempts" INTEGER NOT NULL,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "fencing_token" BIGINT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "not_before" TIMESTAMPTZ(3),
    "downstream_key" TEXT NOT NULL,
    "workflow_id" TEXT,
    "trace_id" TEXT,
    "result" JSONB,
    "error" JSONB,
    "resolution" JSONB,
    "completed_at" TIMESTAMPTZ(3),
    "result_expires_at" TIMESTAMPTZ(3),
    "conflict_count" INTEGER NOT NULL DEFAULT 0,
    "mismatch_count" INTEGER NOT NULL DEFAULT 0,
    "replay_count" INTEGER NOT NULL DEFAULT 0,
    "takeover_count" INTEGER NOT NULL DEFAULT 0,
    "heartbeat_count" INTEGER NOT NULL DEFAULT 0,
    "last_conflict_at" TIMESTAMPTZ(3),
    "last_replay_at" TIMESTAMPTZ(3),
    "last_heartbeat_at" TIMESTAMPTZ(3),
    "flagged_at" TIMESTAMPTZ(3),
    "flag_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "operation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attempt" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "fencing_token" BIGINT NOT NULL,
    "principal" TEXT NOT NULL,
    "api_key_id" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(3),
    "lease_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "outcome" "attempt_outcome",
    "error" JSONB,
    "complete_digest" TEXT,
    "provider" JSONB,
    "workflow_id" TEXT,
    "trace_id" TEXT,

    CONSTRAINT "attempt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_event" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approval" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" "approval_state" NOT NULL DEFAULT 'pending',
    "requested_by" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "approval_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "tenant_slug_key" ON "tenant"("slug");

-- CreateIndex
CREATE INDEX "api_key_hash_idx" ON "api_key"("hash");

-- CreateIndex
CREATE INDEX "api_key_tenant_id_created_at_idx" ON "api_key"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "tool_tenant_id_name_key" ON "tool"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "operation_tenant_id_state_created_at_idx" ON "operation"("tenant_id", "state", "created_at");

-- CreateIndex
CREATE INDEX "operation_tenant_id_created_at_idx" ON "operation"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "operation_state_result_expires_at_idx" ON "operation"("state", "result_expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "operation_tenant_id_principal_tool_key_digest_key" ON "operation"("tenant_id", "principal", "tool", "key_digest");

-- CreateIndex
CREATE UNIQUE INDEX "operation_tenant_id_downstream_key_key" ON "operation"("tenant_id", "downstream_key");

-- CreateIndex
CREATE INDEX "attempt_operation_id_idx" ON "attempt"("operation_id");

-- CreateIndex
CREATE UNIQUE INDEX "attempt_tenant_id_operation_id_number_key" ON "attempt"("tenant_id", "operation_id", "number");

-- CreateIndex
CREATE UNIQUE INDEX "attempt_tenant_id_fencing_token_key" ON "attempt"("tenant_id", "fencing_token");

-- CreateIndex
CREATE INDEX "audit_event_tenant_id_target_type_target_id_id_idx" ON "audit_event"("tenant_id", "target_type", "target_id", "id");

-- CreateIndex
CREATE INDEX "audit_event_tenant_id_created_at_idx" ON "audit_event"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "approval_tenant_id_state_created_at_idx" ON "approval"("tenant_id", "state", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "approval_tenant_id_operation_id_key" ON "approval"("tenant_id", "operation_id");

-- AddForeignKey
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool" ADD CONSTRAINT "tool_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "operation" ADD CONSTRAINT "operation_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attempt" ADD CONSTRAINT "attempt_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approval" ADD CONSTRAINT "approval_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
