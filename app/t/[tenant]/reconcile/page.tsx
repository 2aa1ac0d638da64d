import { IntentLink } from "@/components/ui/intent-link";
import { createLoader, parseAsString } from "nuqs/server";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { countReconcileQueue, listReconcileQueue } from "@/lib/console/reconcile-queue";
import { decodeTimeCursor, encodeTimeCursor } from "@/lib/console/time-cursor";
import { PageHeader } from "@/components/ui/page-header";
import { AutoRefresh } from "@/components/ui/auto-refresh";
import { EmptyState } from "@/components/ui/empty-state";
import { ReconcileTable } from "./_components/reconcile-table";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Reconcile" };

export const dynamic = "force-dynamic";

const PAGE_SIZE = 100;
const loadSearchParams = createLoader({ after: parseAsString });

// GET /t/{tenant}/reconcile – the reconcile queue: outcomes nobody knows, oldest first
export default async function ReconcilePage({ params, searchParams }: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { tenant: slug } = await params;
  const { user, tenant } = await requireConsole(slug);
  const { after } = await loadSearchParams(searchParams);
  // A cursor that is not one of ours (an edited URL) starts from the beginning rather than failing the page.
  const position = decodeTimeCursor(after);
  const cursor = position && { createdAt: position.at, id: position.id };
  const [page, total] = await Promise.all([
    listReconcileQueue({ db: db(), tenantId: tenant.id, limit: PAGE_SIZE, after: cursor }),
    countReconcileQueue({ db: db(), tenantId: tenant.id }),
  ]);
  const base = `/t/${tenant.slug}/reconcile`;
  const canResolve = can(user.role, "resolve");
  const empty = page.rows.length === 0 && !cursor;
  return (
    <>
      <PageHeader
        title="Reconcile"
        actions={<AutoRefresh page="reconcile" />}
        description={
          total
            ? `${count(total)} operation${total === 1 ? "" : "s"} whose outcome nobody knows, oldest first. Agents retrying an unknown one get 409 outcome-unknown until someone resolves it; a lease that expired is taken over by the next claim only where its tool allows a takeover.`
            : "Operations whose outcome nobody knows wait here for a person."
        }
      />
      {canResolve || empty ? null : <p className="muted small">Your role ({user.role}) can read this queue; resolving needs an operator or an admin.</p>}
      {/* Mounted even when the queue is empty, so the summary of the resolve that emptied it stays on screen. */}
      <ReconcileTable
        rows={page.rows}
        tenant={tenant.slug}
        canResolve={canResolve}
        actor={`user:${user.email}`}
        now={page.now}
        empty={
          empty ? (
            <EmptyState title="Nothing to reconcile">
              An operation lands here when an agent reports an <strong>unknown</strong> outcome, or when its lease expires without a report and its
              tool may not be taken over. Check the provider, then resolve it as succeeded, failed, or retry allowed.
            </EmptyState>
          ) : null
        }
      />
      {empty ? null : (
        <nav className="pager" aria-label="Queue pages">
          <span>
            {page.rows.length === 0
              ? "No newer operations wait."
              : cursor
                ? `${count(page.rows.length)} more, created after ${cursor.createdAt.replace("T", " ").slice(0, 19)} UTC (${count(total)} in all)`
                : `The oldest ${count(page.rows.length)} of ${count(total)}`}
          </span>
          <span className="row">
            {cursor ? <IntentLink href={base}>First page</IntentLink> : null}
            {page.next ? <IntentLink href={`${base}?after=${encodeURIComponent(encodeTimeCursor({ at: page.next.createdAt, id: page.next.id }))}`}>Next page (newer) →</IntentLink> : null}
          </span>
        </nav>
      )}
    </>
  );
}

const count = (n: number) => n.toLocaleString("en-US");
