import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { listApiKeys } from "@/lib/api-keys/revoke-api-key";
import { listTools } from "@/lib/tools/get-tool";
import { EmptyState } from "@/components/ui/empty-state";
import { PageHeader } from "@/components/ui/page-header";
import { ActionNoticeProvider, ActionNoticeSlot } from "@/components/ui/action-notice";
import { TimeAgo } from "@/components/ui/time-ago";
import { CreateKeyButton } from "./_components/create-key-button";
import { RevokeKeyButton } from "./_components/revoke-key-button";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "API keys" };

export const dynamic = "force-dynamic";

const roleHelp = { agent: "claims, heartbeats, completes, reads", approver: "approval decisions and reads", admin: "everything in this tenant" } as const;

// GET /t/{tenant}/api-keys – (admin) the tenant's API keys: who uses them, for what, and when last
export default async function ApiKeysPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireConsole((await params).tenant, "administer");
  const [keys, tools] = await Promise.all([listApiKeys({ db: db(), tenantId: tenant.id }), listTools({ db: db(), tenantId: tenant.id })]);
  // Live keys first, newest first; revoked ones after them.
  const sorted = [...keys].sort((a, b) => Number(Boolean(a.revokedAt)) - Number(Boolean(b.revokedAt)) || b.createdAt.getTime() - a.createdAt.getTime());
  const live = keys.filter((k) => !k.revokedAt).length;
  const now = Date.now();
  return (
    // What a change did (a key revoked, a role changed) is said here: the row that was changed
    // may move, and its button with it (console review).
    <ActionNoticeProvider>
      <PageHeader
        title="API keys"
        description={`${live} live key${live === 1 ? "" : "s"}${keys.length > live ? `, ${keys.length - live} revoked` : ""}. A key acts as its principal; only its SHA-256 is stored, so a lost secret is replaced, not recovered.`}
        actions={<CreateKeyButton tenant={tenant.slug} tools={tools.map((t) => t.name)} />}
      />
      <ActionNoticeSlot />
      {sorted.length === 0 ? (
        <EmptyState title="No API keys yet">Create one for each agent or service: choose its principal (the name its operations are recorded under), its role and, if you like, the tools it may use.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="data keys-table">
            <caption className="visually-hidden">API keys of this tenant</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Principal</th>
                <th scope="col">Role</th>
                <th scope="col">Tools</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sorted.map((k) => (
                <tr key={k.id} id={`key-${k.id}`} className={k.revokedAt ? "revoked" : undefined}>
                  <td>
                    <code title={`id ${k.id}`}>{k.prefix}…</code>
                  </td>
                  <td>{k.principal}</td>
                  <td>
                    <span className={`badge role-${k.role}`} title={roleHelp[k.role]}>
                      {k.role}
                    </span>
                  </td>
                  <td className="tools-cell">{k.tools.length ? k.tools.map((t) => <code key={t}>{t}</code>) : <span className="muted">all tools</span>}</td>
                  <td>
                    <TimeAgo at={k.createdAt} now={now} />
                  </td>
                  <td>{k.lastUsedAt ? <TimeAgo at={k.lastUsedAt} now={now} /> : <span className="muted">never</span>}</td>
                  <td>
                    {k.revokedAt ? (
                      <span className="badge danger">
                        revoked <TimeAgo at={k.revokedAt} now={now} />
                      </span>
                    ) : (
                      <span className="badge s-succeeded">live</span>
                    )}
                  </td>
                  <td>{k.revokedAt ? null : <RevokeKeyButton tenant={tenant.slug} id={k.id} prefix={k.prefix} principal={k.principal} role={k.role} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </ActionNoticeProvider>
  );
}
