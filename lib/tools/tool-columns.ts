// The tool columns, aliased to ToolRow's names, for the raw SQL that reads or upserts tools.
import { Prisma } from "@/lib/generated/prisma/client";

export const selectToolColumns = Prisma.sql`name, description, read_only_hint AS "readOnlyHint", destructive_hint AS "destructiveHint",
  idempotent_hint AS "idempotentHint", open_world_hint AS "openWorldHint", lease_seconds AS "leaseSeconds", max_attempts AS "maxAttempts",
  backoff_base_ms AS "backoffBaseMs", backoff_cap_ms AS "backoffCapMs", takeover::text AS takeover, approval::text AS approval,
  approval_ttl_seconds AS "approvalTtlSeconds", result_retention_hours AS "resultRetentionHours", probe, created_at AS "createdAt", updated_at AS "updatedAt"`;
