import { z } from "zod";
import type { Db } from "@/lib/db";
import { newId } from "@/lib/crypto/ids";
import { newApiKeySecret } from "@/lib/api-keys/api-key-secret";
import { recordAudit } from "@/lib/audit/record-audit";
import { toolNameSchema } from "@/lib/tools/tool-schema";
import { confirmActingAdmin } from "@/lib/users/acting-admin";

export const apiKeyInputSchema = z.object({
  principal: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/, "must be 1-128 characters: letters, digits and _ . : @ -"),
  role: z.enum(["agent", "approver", "admin"]),
  tools: z.array(toolNameSchema).max(200).default([]),
});

export type ApiKeyInput = z.input<typeof apiKeyInputSchema>;

export type ApiKeySummary = {
  id: string;
  prefix: string;
  principal: string;
  role: "agent" | "approver" | "admin";
  tools: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

// Returns the secret exactly once; only its SHA-256 is stored. `admin` is the console's signed-in
// admin, read again in the transaction (lib/users/acting-admin.ts); the CLI and the seed have none.
export async function createApiKey(options: {
  db: Db;
  tenantId: string;
  input: ApiKeyInput;
  actor: string;
  admin?: { id: string };
}): Promise<{ key: ApiKeySummary; secret: string }> {
  const input = apiKeyInputSchema.parse(options.input);
  const { secret, hash, prefix } = newApiKeySecret();
  const key = await options.db.$transaction(async (tx) => {
    if (options.admin) await confirmActingAdmin(tx, { id: options.admin.id, tenantId: options.tenantId });
    const created = await tx.apiKey.create({
      data: { id: newId("key"), tenantId: options.tenantId, hash, prefix, principal: input.principal, role: input.role, tools: input.tools },
      select: summarySelect,
    });
    await recordAudit(tx, {
      tenantId: options.tenantId,
      actor: options.actor,
      action: "api_key.created",
      targetType: "api_key",
      targetId: created.id,
      after: { prefix, principal: input.principal, role: input.role, tools: input.tools },
    });
    return created;
  });
  return { key, secret };
}

export const summarySelect = {
  id: true,
  prefix: true,
  principal: true,
  role: true,
  tools: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;
