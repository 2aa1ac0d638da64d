import { z } from "zod";
import { db } from "@/lib/db";
import { userRoles, type UserRole } from "@/lib/auth/roles";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { setUserDisabled } from "@/lib/users/disable-user";
import { setUserRole } from "@/lib/users/set-user-role";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

const reason = z.string().trim().max(2000).optional();
// One change per request, so each is its own audit event with its own reason.
const changeSchema = z.union([
  z.object({ role: z.enum(userRoles as [UserRole, ...UserRole[]]), reason }).strict(),
  z.object({ disabled: z.boolean(), reason }).strict(),
]);

// PATCH /api/console/{tenant}/users/{id} – an admin changes a user's role, or disables / re-enables them
export const PATCH = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/users/{id}", capability: "administer" },
  async ({ req, user, tenant, params, ctx }) => {
    ctx.annotate({ targetUserId: params.id });
    const change = changeSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
    const common = { db: db(), tenantId: tenant.id, userId: params.id, reason: change.reason, actor: { id: user.id, email: user.email } };
    const result = "role" in change ? await setUserRole({ ...common, role: change.role }) : await setUserDisabled({ ...common, disabled: change.disabled });
    return json(result);
  },
);

export const { GET, POST, PUT, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/users/{id}", ["PATCH"]);
