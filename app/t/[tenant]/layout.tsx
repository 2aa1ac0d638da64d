import type { ReactNode } from "react";
import { NuqsAdapter } from "nuqs/adapters/next/app";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { countReconcileQueue } from "@/lib/console/reconcile-queue";
import { countPendingApprovals } from "@/lib/approvals/list-approvals";
import { countInbox } from "@/lib/console/webhook-inbox";
import { NavLinks, type NavItem } from "@/components/shell/nav-links";
import { TenantSwitcher } from "@/components/shell/tenant-switcher";
import { SignOutButton } from "@/components/shell/sign-out-button";
import { ForgetListsLeft } from "@/components/ui/crumbs";

export const dynamic = "force-dynamic";

const BADGE_CAP = 1000;

// The console shell: sections, tenant switcher, who is signed in. Every page below it checks
// the session and the tenant membership again on the server (layouts do not guard pages).
export default async function ConsoleLayout({ children, params }: { children: ReactNode; params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { user, tenant } = await requireConsole(slug);
  const [waiting, approvals, inbox] = await Promise.all([
    countReconcileQueue({ db: db(), tenantId: tenant.id, cap: BADGE_CAP }),
    countPendingApprovals({ db: db(), tenantId: tenant.id, cap: BADGE_CAP }),
    countInbox({ db: db(), tenantId: tenant.id, cap: BADGE_CAP }),
  ]);
  const base = `/t/${tenant.slug}`;
  const items: NavItem[] = [
    { href: base, label: "Overview" },
    { href: `${base}/operations`, label: "Operations" },
    { href: `${base}/reconcile`, label: "Reconcile", count: waiting, countLabel: waiting >= BADGE_CAP ? `${BADGE_CAP}+` : undefined },
    // Every role reads the inbox (as the reconcile queue); matching and ignoring need an operator.
    { href: `${base}/inbox`, label: "Inbox", count: inbox, countLabel: inbox >= BADGE_CAP ? `${BADGE_CAP}+` : undefined },
    { href: `${base}/approvals`, label: "Approvals", count: approvals, countLabel: approvals >= BADGE_CAP ? `${BADGE_CAP}+` : undefined },
    { href: `${base}/tools`, label: "Tools" },
    { href: `${base}/subscriptions`, label: "Subscriptions" },
    ...(can(user.role, "administer") ? [{ href: `${base}/api-keys`, label: "API keys" }, { href: `${base}/users`, label: "Users" }] : []),
    { href: `${base}/audit`, label: "Audit log" },
  ];
  return (
    <NuqsAdapter>
      <div className="shell">
        {/* First stop of the keyboard: past the tenant switcher and a dozen section links (console review). */}
        <a className="skip-link" href="#content">
          Skip to content
        </a>
        <aside className="sidebar">
          <div className="brand">Tollgate</div>
          <TenantSwitcher current={tenant.slug} tenants={user.tenants} />
          <NavLinks items={items} />
          <div className="sidebar-foot">
            {/* The address wraps in the sidebar and is cut with an ellipsis in the phone's top bar; the title always holds it whole. */}
            <span className="who">
              <span className="who-email" title={user.email}>
                {user.email}
              </span>
              <span className="who-role">
                {" "}
                · <strong>{user.role}</strong>
              </span>
            </span>
            <SignOutButton />
          </div>
        </aside>
        <main className="content" id="content" tabIndex={-1}>
          {children}
        </main>
        <ForgetListsLeft />
      </div>
    </NuqsAdapter>
  );
}
