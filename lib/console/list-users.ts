import type { Db } from "@/lib/db";
import type { UserRole } from "@/lib/auth/roles";

export type TenantUserRow = {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  allTenants: boolean;
  // Slugs of the tenants the user is a member of that the viewer can see too (empty for
  // all-tenants admins).
  tenants: string[];
  hasPassword: boolean;
  createdAt: string;
  disabledAt: string | null;
};

// The people who can open this tenant in the console: its members and the all-tenants admins.
// Active users first, then by email. Small (people, not operations), so no paging.
// `visibleTenantIds`: the tenants the viewing admin can open. A member's other tenants are named
// only among those: a tenant the viewer does not belong to does not exist for them, not even as
// a slug next to a colleague's name.
export async function listTenantUsers(options: { db: Db; tenantId: string; visibleTenantIds: string[] }): Promise<TenantUserRow[]> {
  const rows = await options.db.$queryRaw<
    { id: string; email: string; name: string; role: UserRole; all_tenants: boolean; tenants: string[] | null; has_password: boolean; created_at: Date; disabled_at: Date | null }[]
  >`
    SELECT u.id, u.email, u.name, u.role::text AS role, u.all_tenants, u.password_hash IS NOT NULL AS has_password, u.created_at, u.disabled_at,
      (SELECT array_agg(t.slug ORDER BY t.slug) FROM user_tenant m JOIN tenant t ON t.id = m.tenant_id WHERE m.user_id = u.id AND m.tenant_id = ANY (${options.visibleTenantIds}::text[])) AS tenants
    FROM app_user u
    WHERE u.all_tenants OR EXISTS (SELECT 1 FROM user_tenant m WHERE m.user_id = u.id AND m.tenant_id = ${options.tenantId})
    ORDER BY u.disabled_at IS NOT NULL, u.email
    LIMIT 1000`;
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    role: r.role,
    allTenants: r.all_tenants,
    tenants: r.tenants ?? [],
    hasPassword: r.has_password,
    createdAt: r.created_at.toISOString(),
    disabledAt: r.disabled_at?.toISOString() ?? null,
  }));
}
