import type { Db } from "@/lib/db";
import { recordAudit } from "@/lib/audit/record-audit";
import { summarySelect, type ApiKeySummary } from "@/lib/api-keys/create-api-key";

// Compare-and-set: only a live key is revoked; revoking twice reports the first revocation.
// The audit event records the key before and after, as every console change does: the update
// matched only while revoked_at was NULL, and it changes nothing else, so that is the before.
export async function revokeApiKey(options: { db: Db; id: string; tenantId?: string; actor: string; reason?: string | null }): Promise<ApiKeySummary | null> {
  return options.db.$transaction(async (tx) => {
    const where = { id: options.id, ...(options.tenantId ? { tenantId: options.tenantId } : {}) };
    const { count } = await tx.apiKey.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: new Date() } });
    const key = await tx.apiKey.findFirst({ where, select: { ...summarySelect, tenantId: true } });
    if (!key) return null;
    if (count === 1) {
      const facts = { prefix: key.prefix, principal: key.principal, role: key.role, tools: key.tools };
      await recordAudit(tx, {
        tenantId: key.tenantId,
        actor: options.actor,
        action: "api_key.revoked",
        targetType: "api_key",
        targetId: key.id,
        before: { ...facts, revokedAt: null },
        after: { ...facts, revokedAt: key.revokedAt },
        reason: options.reason,
      });
    }
    const { tenantId: _tenantId, ...summary } = key;
    return summary;
  });
}

export async function listApiKeys(options: { db: Db; tenantId: string }): Promise<ApiKeySummary[]> {
  return options.db.apiKey.findMany({ where: { tenantId: options.tenantId }, orderBy: { createdAt: "asc" }, select: summarySelect });
}
