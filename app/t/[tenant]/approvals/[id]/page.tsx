import type { Metadata } from "next";
import { IntentLink } from "@/components/ui/intent-link";
import { notFound } from "next/navigation";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { getApprovalDetail } from "@/lib/approvals/approval-detail";
import { isStorableText } from "@/lib/console/storable-text";
import { ActionNoticeProvider, ActionNoticeSlot, TakeFocus } from "@/components/ui/action-notice";
import { Crumbs } from "@/components/ui/crumbs";
import { JsonView } from "@/components/ui/json-view";
import { StateBadge } from "@/components/ui/state-badge";
import { TimeAgo } from "@/components/ui/time-ago";
import { Countdown } from "../_components/countdown";
import { DecisionForm } from "../_components/decision-form";
import { ToolHints } from "../_components/tool-hints";
import { traceHref } from "@/lib/console/trace-origin";
import { jsonHasInvisible, showInvisible } from "@/lib/console/visible-characters";

export const dynamic = "force-dynamic";

// The tab names the object: several traces open side by side stay apart.
export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Approval ${(await params).id.slice(0, 64)}` };
}

// GET /t/{tenant}/approvals/{id} – one request for a person's yes: what exactly would run, who asks, and whether it looks like a duplicate
export default async function ApprovalPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string; id: string }>;
  searchParams: Promise<{ notRecorded?: string | string[] }>;
}) {
  const { tenant: slug, id } = await params;
  const { notRecorded } = await searchParams;
  const { user, tenant } = await requireConsole(slug);
  // An id PostgreSQL cannot take names no approval (see isStorableText); asked for, it would be a 500.
  const detail = isStorableText(id) ? await getApprovalDetail({ db: db(), tenantId: tenant.id, approvalId: id }) : null;
  if (!detail) notFound();
  const { approval: a, tool, duplicates, flag, now } = detail;
  const base = `/t/${tenant.slug}`;
  const open = a.state === "pending" && Date.parse(a.expiresAt) > now;
  const identical = duplicates.filter((d) => d.differences.length === 0);
  // A yes that lapsed unused keeps its approver (tollgate_expire_unclaimed_approval); an expiry
  // undecided is written by the system.
  const lapsed = a.state === "expired" && a.decidedBy !== null && a.decidedBy !== "system:approval-expiry";
  return (
    <ActionNoticeProvider>
      <div className="stack approval-page">
        <Crumbs list={{ href: `${base}/approvals`, label: "Approvals" }} current={a.id} />
        <div className="page-head">
          <div>
            <h1 className="row">
              <span>{a.tool}</span>
              <StateBadge state={a.state === "pending" ? "awaiting_approval" : a.state} />
              {tool ? <ToolHints tool={tool} /> : null}
            </h1>
            <p>
              Requested by <strong>{a.principal}</strong> <TimeAgo at={a.createdAt} now={now} />
              {a.workflowId ? (
                <>
                  {" "}in workflow <code>{showInvisible(a.workflowId)}</code>
                </>
              ) : null}
              {a.state === "pending" ? (
                <>
                  {" · "}
                  <Countdown until={a.expiresAt} now={now} />
                </>
              ) : null}
              {" · "}
              <IntentLink href={traceHref(tenant.slug, a.operationId, "approvals")}>operation trace</IntentLink>
            </p>
            {tool?.description ? <p className="muted">{tool.description}</p> : null}
          </div>
        </div>
        <ActionNoticeSlot />

        {flag ? (
          <div className="notice warn-notice operation-flag" role={open ? "alert" : "note"}>
            <strong>Flagged:</strong> {flag.reason} <TimeAgo at={flag.at} now={now} />.{" "}
            {open ? "Approving lets the agent's next claim run the tool: check with the provider first." : null}{" "}
            <IntentLink href={traceHref(tenant.slug, a.operationId, "approvals")}>operation trace</IntentLink>
          </div>
        ) : null}

        {/* An alert only while someone may still approve; a decided request keeps it as a note. */}
        {duplicates.length > 0 ? (
          <div className="notice warn-notice duplicate-intent" role={open ? "alert" : "note"}>
            <strong>Possible duplicate intent.</strong>{" "}
            {identical.length > 0
              ? `${identical.length} other operation${identical.length === 1 ? "" : "s"} of this tool ran with identical arguments in the last 24 h, under another Idempotency-Key or principal: idempotency does not join ${identical.length === 1 ? "it" : "them"} to this one.`
              : "Operations of this tool with nearly the same arguments ran in the last 24 h under another Idempotency-Key or principal."}{" "}
            An agent that mints a new key on every retry looks exactly like this{open ? ": check before you approve." : "."}
            <ul className="compact-list">
              {duplicates.slice(0, 10).map((d) => (
                <li key={d.operationId}>
                  <IntentLink href={traceHref(tenant.slug, d.operationId, "approvals")} className="mono">
                    {d.operationId}
                  </IntentLink>{" "}
                  <StateBadge state={d.state} /> by {d.principal}
                  {d.sameKey ? <strong> under this same Idempotency-Key</strong> : null}, <TimeAgo at={d.createdAt} now={now} /> —{" "}
                  {d.differences.length === 0 ? (
                    <strong>identical arguments</strong>
                  ) : (
                    <>
                      differs only in{" "}
                      {d.differences.map((x, i) => (
                        <span key={x.path}>
                          {i > 0 ? "; " : null}
                          <code>{x.path}</code>: <code className="wrap-anywhere">{x.there}</code> there, <code className="wrap-anywhere">{x.here}</code> here
                        </span>
                      ))}
                    </>
                  )}
                </li>
              ))}
            </ul>
            {duplicates.length > 10 ? <p className="small">…and {duplicates.length - 10} more.</p> : null}
          </div>
        ) : null}

        <section className="panel" aria-labelledby="args-title">
          <h2 id="args-title">
            Arguments <span className="muted small">· exactly what will run; the approval is bound to their fingerprint</span>
          </h2>
          {/* Escaped in the JSON below; said here too, since an approver reads values, not escapes. */}
          {jsonHasInvisible(a.args) ? (
            <div className="notice warn-notice invisible-characters" role={open ? "alert" : "note"}>
              <strong>These arguments contain invisible or direction-changing characters, shown as \uXXXX.</strong> What they
              display as elsewhere (a statement, the provider&apos;s dashboard) may differ from what you read here.
            </div>
          ) : null}
          <JsonView label="args" value={a.args} open />
          <p className="muted small">
            Fingerprint <code>{a.fingerprint}</code>
          </p>
        </section>

        {open && can(user.role, "decide-approvals") ? (
          <DecisionForm tenant={tenant.slug} approvalId={a.id} tool={a.tool} seenFlaggedAt={flag?.at ?? null} />
        ) : a.state === "pending" && open ? (
          <p className="muted">Your role ({user.role}) can read this request; deciding needs an approver or an admin.</p>
        ) : (
          <section className="panel" aria-labelledby="decision-title">
            <h2 id="decision-title">Decision</h2>
            {(notRecorded === "approve" || notRecorded === "reject") && a.state !== "pending" ? (
              <TakeFocus>
                <p className="error" role="alert">
                  Your {notRecorded === "approve" ? "approval" : "rejection"} was not recorded: this request was already{" "}
                  {a.state === "expired" ? "expired" : `${a.state} by ${a.decidedBy?.replace(/^user:/, "") ?? "someone else"}`}, as shown below.
                </p>
              </TakeFocus>
            ) : null}
            <p>
              <StateBadge state={a.state === "pending" ? "rejected" : a.state} />{" "}
              {a.state === "pending" ? (
                "Expired undecided; the next claim or the sweep records it."
              ) : lapsed ? (
                <>
                  approved by {a.decidedBy?.replace(/^user:/, "")} <TimeAgo at={a.decidedAt} now={now} />, but the agent did not act on it before its use-by, so it will not run
                </>
              ) : (
                <>
                  by {a.decidedBy?.replace(/^user:/, "")} <TimeAgo at={a.decidedAt} now={now} />
                </>
              )}
            </p>
            {a.reason ? <p className="pre-wrap">{a.reason}</p> : null}
          </section>
        )}
      </div>
    </ActionNoticeProvider>
  );
}
