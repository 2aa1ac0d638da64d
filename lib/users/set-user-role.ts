import { z } from "zod";
import type { Db } from "@/lib/db";
import { recordAudit } from "@/lib/audit/record-audit";
import { userRoles, type UserRole } from "@/lib/auth/roles";
import { auditTenantsFor, loadUserForAdmin, type UserActor } from "@/lib/users/user-admin-scope";

export const setUserRoleSchema = z.object({
  role: z.enum(userRoles as [UserRole, ...UserRole[]]),
  reason: z.string().trim().max(2000).optional(),
});

// Changes a console user's role (global: it applies in every tenant they belong to). A role
// equal to the current one changes nothing and writes no audit event.
export async function setUserRole(options: {
  db: Db;
  tenantId: string;
  userId: string;
  role: UserRole;
  reason?: string;
  actor: UserActor;
}): Promise<{ changed: boolean; role: UserRole }> {
  return options.db.$transaction(async (tx) => {
    const user = await loadUserForAdmin(tx, options);
    if (user.role === options.role) return { changed: false, role: options.role };
    // Only admins may belong to all tenants. An all-tenants admin who is demoted keeps access to
    // the tenant the change was made in (as a plain member), and loses the others.
    const leavesAllTenants = user.allTenants && options.role !== "admin";
    await tx.user.update({ where: { id: user.id }, data: { role: options.role, ...(leavesAllTenants ? { allTenants: false } : {}) } });
    if (leavesAllTenants) {
      await tx.userTenant.upsert({ where: { tenantId_userId: { tenantId: options.tenantId, userId: user.id } }, create: { tenantId: options.tenantId, userId: user.id }, update: {} });
    }
    for (const tenantId of auditTenantsFor(user, options.tenantId)) {
      await recordAudit(tx, {
        tenantId,
        actor: `user:${options.actor.email}`,
        action: "user.role_changed",
        targetType: "user",
        targetId: user.id,
        before: { email: user.email, role: user.role, allTenants: user.allTenants },
        after: { email: user.email, role: options.role, allTenants: user.allTenants && !leavesAllTenants },
        reason: options.reason || null,
      });
    }
    return { changed: true, role: options.role };
  });
}
