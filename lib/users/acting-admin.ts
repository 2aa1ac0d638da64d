import type { Prisma } from "@/lib/generated/prisma/client";
import { ProblemError } from "@/lib/http/problem";

type Tx = Prisma.TransactionClient;

// The signed-in admin behind a console change that grants access or moves a safeguard (a new
// user, API key or event subscription, a tool's policy), and the tenant it is made in.
export type ActingAdmin = { id: string; tenantId: string };

export const NO_LONGER_ADMIN = "Your account can no longer do this: another admin disabled it or changed its role a moment ago.";

// The request was authorized before its transaction began, so an admin disabled (or demoted, or
// taken out of the tenant) in between would still have made the user or key: a way back in for
// the very person being locked out. This reads the admin again inside the transaction, under a
// share lock, so a disable running at the same moment (it locks the row for update,
// lib/users/user-admin-scope.ts) is waited for and seen, or waits for this grant to commit first.
export async function confirmActingAdmin(tx: Tx, admin: ActingAdmin): Promise<void> {
  const rows = await tx.$queryRaw<{ ok: boolean }[]>`
    SELECT (u.role = 'admin' AND u.disabled_at IS NULL
      AND (u.all_tenants OR EXISTS (SELECT 1 FROM user_tenant m WHERE m.user_id = u.id AND m.tenant_id = ${admin.tenantId}))) AS ok
    FROM app_user u WHERE u.id = ${admin.id} FOR SHARE OF u`;
  if (!rows[0]?.ok) throw new ProblemError("forbidden", NO_LONGER_ADMIN);
}
