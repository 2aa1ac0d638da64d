import type { Db } from "@/lib/db";
import { recordAudit } from "@/lib/audit/record-audit";
import { auditTenantsFor, loadUserForAdmin, type UserActor } from "@/lib/users/user-admin-scope";

// Disables (or re-enables) a console user. A disabled user's session stops working on their
// next request, because the console reads the user from the database every time; sessions from
// before the disable stay refused after a re-enable (lib/auth/console-user.ts). The row is
// kept: audit events name people by email and must keep meaning something.
export async function setUserDisabled(options: {
  db: Db;
  tenantId: string;
  userId: string;
  disabled: boolean;
  reason?: string;
  actor: UserActor;
}): Promise<{ changed: boolean; disabledAt: Date | null }> {
  return options.db.$transaction(async (tx) => {
    const user = await loadUserForAdmin(tx, options);
    if (Boolean(user.disabledAt) === options.disabled) return { changed: false, disabledAt: user.disabledAt };
    // Disabling also ends every session signed in until now, for good: re-enabling the user
    // later must not revive a session (perhaps the stolen one that got them disabled).
    const data = options.disabled ? { disabledAt: new Date(), sessionGeneration: { increment: 1 } } : { disabledAt: null };
    const updated = await tx.user.update({ where: { id: user.id }, data, select: { disabledAt: true } });
    for (const tenantId of auditTenantsFor(user, options.tenantId)) {
      await recordAudit(tx, {
        tenantId,
        actor: `user:${options.actor.email}`,
        action: options.disabled ? "user.disabled" : "user.enabled",
        targetType: "user",
        targetId: user.id,
        before: { email: user.email, disabledAt: user.disabledAt },
        after: { email: user.email, disabledAt: updated.disabledAt },
        reason: options.reason || null,
      });
    }
    return { changed: true, disabledAt: updated.disabledAt };
  });
}
