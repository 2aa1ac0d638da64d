-- CreateEnum
CREATE TYPE "user_role" AS ENUM ('viewer', 'operator', 'approver', 'admin');

-- CreateTable
CREATE TABLE "app_user" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "password_hash" TEXT,
    "role" "user_role" NOT NULL,
    "all_tenants" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),

    CONSTRAINT "app_user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_tenant" (
    "tenant_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,

    CONSTRAINT "user_tenant_pkey" PRIMARY KEY ("tenant_id","user_id")
);

-- CreateTable
CREATE TABLE "saved_view" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "saved_view_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "app_user_email_key" ON "app_user"("email");

-- CreateIndex
CREATE INDEX "user_tenant_user_id_idx" ON "user_tenant"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "saved_view_tenant_id_user_id_name_key" ON "saved_view"("tenant_id", "user_id", "name");

-- CreateIndex
CREATE INDEX "operation_tenant_id_tool_created_at_idx" ON "operation"("tenant_id", "tool", "created_at");

-- CreateIndex
CREATE INDEX "operation_tenant_id_principal_created_at_idx" ON "operation"("tenant_id", "principal", "created_at");

-- CreateIndex
CREATE INDEX "operation_tenant_id_key_digest_idx" ON "operation"("tenant_id", "key_digest");

-- AddForeignKey
ALTER TABLE "user_tenant" ADD CONSTRAINT "user_tenant_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_tenant" ADD CONSTRAINT "user_tenant_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "app_user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "saved_view" ADD CONSTRAINT "saved_view_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "app_user"("id") ON DELETE CASCADE ON UPDATE CASCADE;
