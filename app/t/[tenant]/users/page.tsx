import { db } from "@/lib/db";
import { singleSignOnName } from "@/lib/auth/single-sign-on";
import { requireConsole } from "@/lib/auth/require-console";
import { listTenantUsers } from "@/lib/console/list-users";
import { EmptyState } from "@/components/ui/empty-state";
import { PageHeader } from "@/components/ui/page-header";
import { ActionNoticeProvider, ActionNoticeSlot } from "@/components/ui/action-notice";
import { TimeAgo } from "@/components/ui/time-ago";
import { CreateUserButton } from "./_components/create-user-button";
import { UserActions } from "./_components/user-actions";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Users" };

export const dynamic = "force-dynamic";

// GET /t/{tenant}/users – (admin) the people who can open this tenant, their roles, and who is disabled
export default async function UsersPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { user: me, tenant } = await requireConsole((await params).tenant, "administer");
  const users = await listTenantUsers({ db: db(), tenantId: tenant.id, visibleTenantIds: me.tenants.map((t) => t.id) });
  const sso = singleSignOnName();
  const active = users.filter((u) => !u.disabledAt).length;
  const now = Date.now();
  return (
    // What a change did (a key revoked, a role changed) is said here: the row that was changed
    // may move, and its button with it (console review).
    <ActionNoticeProvider>
      <PageHeader
        title="Users"
        description={`${active} active, ${users.length - active} disabled. Roles apply in every tenant a person belongs to; all-tenants admins are made with the CLI.`}
        actions={<CreateUserButton tenant={tenant.slug} />}
      />
      <ActionNoticeSlot />
      {users.length === 0 ? (
        <EmptyState title="No users yet">Add the people who operate this tenant. Viewers read; operators resolve unknown outcomes; approvers decide approvals; admins do everything.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="data users-table">
            <caption className="visually-hidden">Console users of this tenant</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Tenants</th>
                <th scope="col">Sign-in</th>
                <th scope="col">Created</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.id} id={`user-${u.id}`} className={u.disabledAt ? "revoked" : undefined}>
                  <td>
                    {u.email}
                    {u.id === me.id ? <span className="muted"> (you)</span> : null}
                  </td>
                  <td>{u.name || <span className="muted">—</span>}</td>
                  <td>
                    <span className={`badge role-${u.role}`}>{u.role}</span>
                  </td>
                  <td className="tools-cell">{u.allTenants ? <span className="badge">all tenants</span> : u.tenants.map((t) => <code key={t}>{t}</code>)}</td>
                  <td>
                    {u.hasPassword ? (
                      "password"
                    ) : sso ? (
                      <span className="muted" title="No password: signs in through single sign-on only">
                        SSO only
                      </span>
                    ) : (
                      // Said "SSO only" with no single sign-on set up: nobody could tell why they could not sign in.
                      <span className="badge warn" title="No password, and single sign-on is not set up (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET): they cannot sign in until it is">
                        cannot sign in
                      </span>
                    )}
                  </td>
                  <td>
                    <TimeAgo at={u.createdAt} now={now} />
                  </td>
                  <td>
                    {u.disabledAt ? (
                      <span className="badge danger">
                        disabled <TimeAgo at={u.disabledAt} now={now} />
                      </span>
                    ) : (
                      <span className="badge s-succeeded">active</span>
                    )}
                  </td>
                  <td>{u.id === me.id ? null : <UserActions tenant={tenant.slug} user={{ id: u.id, email: u.email, role: u.role, disabled: Boolean(u.disabledAt) }} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </ActionNoticeProvider>
  );
}
