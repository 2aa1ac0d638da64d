import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { StateBadge } from "@/components/ui/state-badge";
import { TimeAgo } from "@/components/ui/time-ago";
import { Timeline } from "@/components/timeline/timeline";
import { ResolveButton } from "@/components/resolve-dialog/resolve-button";
import { ActionNoticeProvider, ActionNoticeSlot } from "@/components/ui/action-notice";
import { Crumbs } from "@/components/ui/crumbs";
import { traceOrigin, traceOrigins } from "@/lib/console/trace-origin";
import { CopyButton } from "@/components/ui/copy-button";
import { OperationFacts } from "./_components/operation-facts";
import { ClearFlagButton } from "./_components/clear-flag-button";
import { OperationData } from "./_components/operation-data";

export const dynamic = "force-dynamic";

// The tab names the object: several traces open side by side stay apart.
export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Operation ${(await params).id.slice(0, 64)}` };
}

// GET /t/{tenant}/operations/{id}[?from=reconcile|inbox|approvals|audit] – the trace: everything that
// happened to one operation; `from` is the list it was opened from, which its breadcrumb leads back to
export default async function OperationTracePage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string; id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { tenant: slug, id } = await params;
  const from = traceOrigin((await searchParams).from);
  const { user, tenant } = await requireConsole(slug);
  const trace = await getOperationTrace({ db: db(), tenantId: tenant.id, operationId: id });
  if (!trace) notFound();
  const op = trace.operation;
  const now = trace.now;
  const mayResolve = can(user.role, "resolve");
  const base = `/t/${tenant.slug}`;
  return (
    <ActionNoticeProvider>
      <div className="trace-page">
        <Crumbs list={from ? { href: `${base}/${from}`, label: traceOrigins[from] } : { href: `${base}/operations`, label: "Operations" }} current={op.id} />
        <div className="page-head">
          <div>
            <h1 className="row">
              <span>{op.tool}</span>
              <StateBadge state={op.state} />
              {trace.leaseExpired ? <span className="badge warn">lease expired</span> : null}
              {op.flaggedAt ? <span className="badge danger">flagged</span> : null}
            </h1>
            <p>
              <code>{op.id}</code>
              <CopyButton value={op.id} label="operation id" /> · by {op.principal} · created <TimeAgo at={op.createdAt} now={now} /> · attempt {op.attempts} of {op.maxAttempts}
            </p>
          </div>
          {mayResolve && trace.resolvable ? (
            <div className="row">
              <ResolveButton tenant={tenant.slug} operationId={op.id} attempts={op.attempts} flaggedAt={op.flaggedAt} actor={`user:${user.email}`} />
            </div>
          ) : null}
        </div>
        <ActionNoticeSlot />

        {trace.resolvable ? (
          <div className="notice warn-notice" role="note">
            <strong>{op.state === "unknown" ? "Outcome unknown." : "Lease expired without a report."}</strong>{" "}
            {trace.nextClaimTakesOver ? (
              <>
                Nobody knows yet whether this call took effect. Its tool allows a takeover (its provider dedupes on the downstream key), so an agent retrying it
                takes over as attempt {op.attempts + 1} with the same key.{" "}
              </>
            ) : (
              <>
                Nobody knows whether this call took effect; agents retrying it get <code>409 outcome-unknown</code> until it is resolved.{" "}
              </>
            )}
            {mayResolve ? "Check the provider, then resolve it." : "An operator or an admin can resolve it."}
          </div>
        ) : null}
        {op.flaggedAt ? (
          <div className="error row flag-notice" role="note">
            <span>
              <strong>Flagged <TimeAgo at={op.flaggedAt} now={now} />:</strong> {sentence(op.flagReason ?? "the evidence disagrees with the recorded outcome")}{" "}
              {op.state === "unknown" ? "Check the provider, then resolve it." : "Check the provider; the stored outcome was not changed."}
            </span>
            {mayResolve ? (
              <ClearFlagButton
                tenant={tenant.slug}
                operationId={op.id}
                flaggedAt={op.flaggedAt}
                flagReason={op.flagReason}
                actor={`user:${user.email}`}
                resolvable={trace.resolvable}
              />
            ) : null}
          </div>
        ) : null}

        <OperationFacts op={op} now={now} base={base} />

        <div className="trace-grid">
          <section aria-labelledby="timeline-title" className="panel">
            <h2 id="timeline-title">
              Timeline <span className="muted">· {trace.timeline.length} events, oldest first, UTC</span>
            </h2>
            <Timeline entries={trace.timeline} now={now} label="Operation timeline" />
          </section>
          <OperationData op={op} resolvedBy={trace.resolvedBy} />
        </div>
      </div>
    </ActionNoticeProvider>
  );
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
