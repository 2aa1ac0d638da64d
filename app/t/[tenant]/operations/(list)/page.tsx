import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { listOperations, type OperationRow } from "@/lib/console/list-operations";
import { listOperationFilterOptions } from "@/lib/console/list-operation-filter-options";
import { listSavedViews } from "@/lib/console/saved-views";
import { loadOperationsQuery, operationsPositionReset, serializeOperationsQuery, viewQueryString, type OperationsQueryPatch } from "@/lib/console/operations-query";
import { PageHeader } from "@/components/ui/page-header";
import { RememberListQuery } from "@/components/ui/crumbs";
import { OperationsView } from "./_components/operations-view";
import type { OperationListItem } from "./_components/operation-columns";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Operations" };

export const dynamic = "force-dynamic";

type PageProps = { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

// GET /t/{tenant}/operations – every operation of the tenant, filtered, sorted and paged on
// the server (keyset pages), with the whole view in the URL.
export default async function OperationsPage({ params, searchParams }: PageProps) {
  const { tenant: slug } = await params;
  const { user, tenant } = await requireConsole(slug);
  const query = loadOperationsQuery(await searchParams);
  const [page, options, views] = await Promise.all([
    listOperations({ db: db(), tenantId: tenant.id, query }),
    listOperationFilterOptions({ db: db(), tenantId: tenant.id }),
    listSavedViews({ db: db(), tenantId: tenant.id, userId: user.id }),
  ]);
  const base = `/t/${tenant.slug}/operations`;
  // The page number only labels the rows ("51–100"); the cursor decides which rows they are.
  const pageNumber = page.prevCursor ? Math.max(2, query.page) : 1;
  const href = (patch: OperationsQueryPatch) => `${base}${serializeOperationsQuery({ ...query, ...patch })}`;
  const nextHref = page.nextCursor ? href({ after: page.nextCursor, before: null, page: pageNumber + 1 }) : null;
  // Back to page 1 is a fresh first page (newest rows included), not "the rows before these".
  const prevHref = page.prevCursor ? (pageNumber <= 2 ? href(operationsPositionReset) : href({ before: page.prevCursor, after: null, page: pageNumber - 1 })) : null;
  const exportHref = `/api/console/${tenant.slug}/operations/export${viewQueryString(query) ? `?${viewQueryString(query)}` : ""}`;

  return (
    <>
      <RememberListQuery path={base} />
      <PageHeader
        title="Operations"
        description="Every claimed tool call: its state, attempts, conflicts and replays. The URL holds the view; share it as a link."
        actions={
          <a className="button" href={exportHref} download title="Download every operation matching these filters as CSV (streamed)">
            Export CSV
          </a>
        }
      />
      <OperationsView
        tenant={tenant.slug}
        now={page.now.getTime()}
        rows={page.rows.map(toListItem)}
        total={page.total}
        firstRow={(pageNumber - 1) * query.size + 1}
        prevHref={prevHref}
        nextHref={nextHref}
        pastTheEnd={page.rows.length === 0 && Boolean(query.after)}
        tools={options.tools}
        principals={options.principals}
        views={views.map((v) => ({ id: v.id, name: v.name, query: v.query }))}
      />
    </>
  );
}

// Only what the table shows crosses to the client; the key digest is cut to 16 hex characters.
function toListItem(row: OperationRow): OperationListItem {
  return {
    id: row.id,
    tool: row.tool,
    principal: row.principal,
    state: row.state,
    attemptCount: row.attemptCount,
    maxAttempts: row.maxAttempts,
    conflictCount: row.conflictCount,
    mismatchCount: row.mismatchCount,
    replayCount: row.replayCount,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    resourceId: row.resourceId,
    workflowId: row.workflowId,
    keyDigest: row.keyDigest.slice(0, 16),
    flagged: row.flagged,
  };
}
