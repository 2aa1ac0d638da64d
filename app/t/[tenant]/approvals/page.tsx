import type { Metadata } from "next";
import { IntentLink } from "@/components/ui/intent-link";
import { createLoader, parseAsString, parseAsStringLiteral } from "nuqs/server";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { listApprovals } from "@/lib/approvals/list-approvals";
import { ProblemError } from "@/lib/http/problem";
import { EmptyState } from "@/components/ui/empty-state";
import { PageHeader } from "@/components/ui/page-header";
import { AutoRefresh } from "@/components/ui/auto-refresh";
import { RememberListQuery } from "@/components/ui/crumbs";
import { StateBadge } from "@/components/ui/state-badge";
import { TimeAgo } from "@/components/ui/time-ago";
import { Countdown } from "./_components/countdown";
import { showInvisible, visibleJson, visibleUnits } from "@/lib/console/visible-characters";

export const metadata: Metadata = { title: "Approvals" };

export const dynamic = "force-dynamic";

const PAGE_SIZE = 100;
// One line of the args for scanning the queue; the full JSON is on the approval's page.
// Invisible and direction-changing characters show as \uXXXX; cut on whole units.
const PREVIEW_CHARS = 80;
const preview = (args: unknown) => {
  const units = visibleUnits(JSON.stringify(args ?? null));
  if (units.join("").length <= PREVIEW_CHARS) return units.join("");
  let text = "";
  for (const unit of units) {
    if (text.length + unit.length > PREVIEW_CHARS - 1) break;
    text += unit;
  }
  return `${text}…`;
};

const loadSearchParams = createLoader({ view: parseAsStringLiteral(["pending", "decided"] as const).withDefault("pending"), after: parseAsString });

// GET /t/{tenant}/approvals – high-impact calls waiting for a person (oldest first), and the decided ones
export default async function ApprovalsPage({ params, searchParams }: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { user, tenant } = await requireConsole((await params).tenant);
  const { view, after } = await loadSearchParams(searchParams);
  // A cursor that does not decode (an edited URL, or one holding text PostgreSQL cannot take) starts from the first page.
  const list = (cursor?: string) => listApprovals({ db: db(), tenantId: tenant.id, query: { state: view, limit: PAGE_SIZE, cursor } });
  const { approvals, nextCursor } = await list(after ?? undefined).catch((error: unknown) => {
    if (error instanceof ProblemError) return list();
    throw error;
  });
  const now = Date.now();
  const base = `/t/${tenant.slug}/approvals`;
  const mayDecide = can(user.role, "decide-approvals");
  return (
    <>
      <RememberListQuery path={base} />
      <PageHeader
        title="Approvals"
        actions={<AutoRefresh page="approvals" />}
        description="Tools whose policy requires a person's yes. Each approval covers exactly the arguments shown; the agent's next claim runs them once, or gets 403 if rejected."
      />
      <nav className="tabs row" aria-label="Approval lists">
        <IntentLink href={base} aria-current={view === "pending" ? "page" : undefined}>
          Waiting
        </IntentLink>
        <IntentLink href={`${base}?view=decided`} aria-current={view === "decided" ? "page" : undefined}>
          Decided
        </IntentLink>
      </nav>
      {!mayDecide ? <p className="muted small">Your role ({user.role}) can read approvals; deciding needs an approver or an admin.</p> : null}
      {approvals.length === 0 ? (
        view === "pending" ? (
          <EmptyState title="Nothing waits for approval">
            A claim of a tool with <code>approval: required</code> waits here (202 to the agent) until somebody approves or rejects it, or it expires.
          </EmptyState>
        ) : (
          <EmptyState title="No decided approvals yet">Approved, rejected and expired requests are listed here, newest first.</EmptyState>
        )
      ) : (
        <div className="table-wrap">
          <table className="data approvals-table">
            <caption className="visually-hidden">{view === "pending" ? "Approvals waiting, oldest first" : "Decided approvals, newest first"}</caption>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Arguments</th>
                <th scope="col">Requested by</th>
                <th scope="col">Workflow</th>
                <th scope="col">Requested</th>
                {view === "pending" ? <th scope="col">Expires</th> : (
                  <>
                    <th scope="col">Decision</th>
                    <th scope="col">By</th>
                    <th scope="col">Reason</th>
                  </>
                )}
                <th scope="col" className="sticky-end">
                  <span className="visually-hidden">Open</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {approvals.map((a) => (
                <tr key={a.id}>
                  <td className="tool">
                    <code title={a.tool}>{a.tool}</code>
                  </td>
                  <td className="mono small args-preview" title={visibleJson(a.args)}>
                    {preview(a.args)}
                  </td>
                  <td className="principal" title={a.principal}>
                    {a.principal}
                  </td>
                  <td className="workflow">{a.workflowId ? <code title={showInvisible(a.workflowId)}>{showInvisible(a.workflowId)}</code> : <span className="muted">—</span>}</td>
                  <td>
                    <TimeAgo at={a.createdAt} now={now} />
                  </td>
                  {view === "pending" ? (
                    <td>
                      <Countdown until={a.expiresAt} now={now} />
                    </td>
                  ) : (
                    <>
                      {/* When, under what: one cell, so the decided list still fits a laptop's width. An
                          expiry is recorded when the next claim or the sweep sees it; until then, when it ran out. */}
                      <td className="decision">
                        <StateBadge state={a.state} />
                        <div className="small muted">
                          <TimeAgo at={a.decidedAt ?? (a.state === "expired" ? a.expiresAt : null)} now={now} />
                        </div>
                      </td>
                      <td className="small decided-by" title={a.decidedBy ?? undefined}>
                        {a.decidedBy?.replace(/^user:/, "")}
                      </td>
                      <td className="small reason">
                        {a.reason ? (
                          <span className="clamp-3" title={a.reason}>
                            {a.reason}
                          </span>
                        ) : (
                          <span className="muted">—</span>
                        )}
                      </td>
                    </>
                  )}
                  <td className="sticky-end">
                    <IntentLink href={`${base}/${a.id}`}>{view === "pending" && mayDecide ? "Review" : "Open"}</IntentLink>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {after || nextCursor ? (
        <nav className="pager" aria-label="Approval pages">
          <span>{after ? `${approvals.length} more` : `The first ${approvals.length}`}</span>
          <span className="row">
            {after ? <IntentLink href={view === "pending" ? base : `${base}?view=decided`}>First page</IntentLink> : null}
            {nextCursor ? <IntentLink href={`${base}?${view === "pending" ? "" : "view=decided&"}after=${encodeURIComponent(nextCursor)}`}>Next page →</IntentLink> : null}
          </span>
        </nav>
      ) : null}
    </>
  );
}
