import type { Prisma } from "@/lib/generated/prisma/client";
import { ProblemError } from "@/lib/http/problem";
import { NO_LONGER_ADMIN } from "@/lib/users/acting-admin";

type Tx = Prisma.TransactionClient;

// The signed-in admin making the change; their memberships are read here, under the same transaction.
export type UserActor = { id: string; email: string };

export type ScopedUser = { id: string; email: string; role: string; allTenants: boolean; disabledAt: Date | null; tenantIds: string[] };

// A user's role and "disabled" are global, not per tenant, so an admin of one tenant may change
// a user only if every tenant that user can see is one the admin administers too; otherwise a
// tenant admin could promote someone inside a tenant they have no say in. Nobody changes
// themselves here, so an admin cannot lock themselves (or the last way in) out by accident.
// Locks the user row, so two admins' changes to one user are applied one after the other, and
// the acting admin's own row (both in id order: no deadlock), then checks the actor again: the
// request was authorized before this transaction, so two admins disabling (or demoting) each other
// at the same moment would both have been let through, leaving the tenant with no admin.
export async function loadUserForAdmin(tx: Tx, options: { tenantId: string; userId: string; actor: UserActor }): Promise<ScopedUser> {
  const rows = await tx.$queryRaw<{ id: string; email: string; role: string; all_tenants: boolean; disabled_at: Date | null }[]>`
    SELECT id, email, role::text AS role, all_tenants, disabled_at FROM app_user
    WHERE id IN (${options.userId}, ${options.actor.id}) ORDER BY id FOR UPDATE`;
  const self = rows.find((r) => r.id === options.actor.id);
  if (!self || self.disabled_at || self.role !== "admin") {
    throw new ProblemError("forbidden", NO_LONGER_ADMIN);
  }
  const row = rows.find((r) => r.id === options.userId);
  const memberships = row ? await tx.userTenant.findMany({ where: { userId: row.id }, select: { tenantId: true } }) : [];
  const tenantIds = memberships.map((m) => m.tenantId);
  // Not a member of this tenant: as if it did not exist (404), like every cross-tenant object.
  if (!row || (!row.all_tenants && !tenantIds.includes(options.tenantId))) {
    throw new ProblemError("not-found", "No such user in this tenant.");
  }
  if (row.id === options.actor.id) throw new ProblemError("forbidden", "You cannot change your own account here; ask another admin.");
  const actor = await tx.user.findUnique({ where: { id: options.actor.id }, select: { allTenants: true, tenants: { select: { tenantId: true } } } });
  const actorTenants = new Set(actor?.tenants.map((t) => t.tenantId));
  const outside = !actor?.allTenants && (row.all_tenants || tenantIds.some((id) => !actorTenants.has(id)));
  if (outside) {
    throw new ProblemError("forbidden", "This user also belongs to tenants you do not administer; an admin of all their tenants must change them.");
  }
  return { id: row.id, email: row.email, role: row.role, allTenants: row.all_tenants, disabledAt: row.disabled_at, tenantIds };
}

// Where a change to a user is written in the audit log: every tenant they are a member of, and
// the tenant the change was made from (an all-tenants admin has no membership rows).
export function auditTenantsFor(user: ScopedUser, tenantId: string): string[] {
  return [...new Set([tenantId, ...user.tenantIds])];
}
