import { Prisma } from "@/lib/generated/prisma/client";

type Tx = Pick<Prisma.TransactionClient, "auditEvent">;

export type AuditInput = {
  tenantId: string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  before?: unknown;
  after?: unknown;
  reason?: string | null;
};

// Appends one audit event inside the caller's transaction, so the log and the change
// it describes commit together or not at all. The table refuses UPDATE and DELETE.
export async function recordAudit(tx: Tx, input: AuditInput): Promise<void> {
  await tx.auditEvent.create({
    data: {
      tenantId: input.tenantId,
      actor: input.actor,
      action: input.action,
      targetType: input.targetType,
      targetId: input.targetId,
      before: toJson(input.before),
      after: toJson(input.after),
      reason: input.reason ?? null,
    },
  });
}

function toJson(value: unknown): Prisma.InputJsonValue | typeof Prisma.DbNull {
  if (value === undefined || value === null) return Prisma.DbNull;
  // Round-trip drops undefined fields and turns Dates into strings, as the JSON column stores them.
  return JSON.parse(JSON.stringify(value)) as Prisma.InputJsonValue;
}
