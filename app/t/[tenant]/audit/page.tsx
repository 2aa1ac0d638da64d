import type { Metadata } from "next";
import { Fragment } from "react";
import { IntentLink } from "@/components/ui/intent-link";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { hasAuditFilters, loadAuditQuery, serializeAuditQuery, type AuditQuery } from "@/lib/console/audit-query";
import { listAuditEvents, type AuditRow } from "@/lib/console/list-audit-events";
import { EmptyState } from "@/components/ui/empty-state";
import { JsonView } from "@/components/ui/json-view";
import { PageHeader } from "@/components/ui/page-header";
import { TimeAgo } from "@/components/ui/time-ago";
import { utcDateTime } from "@/components/timeline/format-time";
import { AuditFilters } from "./_components/audit-filters";
import { summarizeChange } from "./_components/summarize-change";
import { traceHref } from "@/lib/console/trace-origin";

export const metadata: Metadata = { title: "Audit log" };

export const dynamic = "force-dynamic";

const PAGE_SIZE = 50;

// GET /t/{tenant}/audit – the audit log: who did what to which object, when and why; newest first
export default async function AuditPage({ params, searchParams }: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { tenant } = await requireConsole((await params).tenant);
  const query = await loadAuditQuery(searchParams);
  const page = await listAuditEvents({ db: db(), tenantId: tenant.id, query, limit: PAGE_SIZE });
  const base = `/t/${tenant.slug}`;
  const filtered = hasAuditFilters(query);
  const link = (position: Partial<AuditQuery>) => `${base}/audit${serializeAuditQuery({ ...query, before: null, after: null, ...position })}`;
  const now = Date.now();
  return (
    <>
      <PageHeader title="Audit log" description="Every change to operations, approvals, tools, keys and users: who (actor), what (action and target), why (reason), and the state before and after. Append-only." />
      <AuditFilters />
      {page.scannedTo ? (
        <p className="notice small" role="status">
          Searched back to event #{page.scannedTo} ({(20_000).toLocaleString("en-US")} events per page) and found {page.rows.length ? "only these" : "no"} matches there.{" "}
          <IntentLink href={link({ before: page.scannedTo })}>Search older events →</IntentLink>
        </p>
      ) : null}
      {page.rows.length === 0 ? (
        <EmptyState title={filtered ? "No events match these filters" : query.before || query.after ? "No more events" : "No events yet"}>
          {filtered ? (
            <>
              Action and actor match from the start (<code>operation.</code>, <code>user:</code>); the target id must match exactly. <IntentLink href={`${base}/audit`}>Clear the filters</IntentLink>
            </>
          ) : (
            "Claims, completions, resolutions and every console change are recorded here as they happen."
          )}
        </EmptyState>
      ) : (
        <>
          <div className="table-wrap">
            <table className="data audit-table">
              <caption className="visually-hidden">Audit events, newest first</caption>
              <colgroup>
                <col className="c-when" />
                <col className="c-actor" />
                <col className="c-action" />
                <col className="c-target" />
                <col className="c-reason" />
                <col className="c-change" />
              </colgroup>
              <thead>
                <tr>
                  <th scope="col">Time (UTC)</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Change</th>
                </tr>
              </thead>
              <tbody>
                {page.rows.map((e) => (
                  <tr key={e.id} id={`event-${e.id}`}>
                    <td className="when">
                      <span className="mono">{utcDateTime(e.createdAt).slice(0, 19)}</span>
                      <div className="muted small">
                        <TimeAgo at={e.createdAt} now={now} />
                      </div>
                    </td>
                    <td className="actor">
                      <IntentLink href={link({ actor: e.actor })} title={`${e.actor}: show only this actor's events`}>
                        {e.actorKey ? e.actorKey.principal : e.actor.replace(/^user:/, "")}
                      </IntentLink>
                      <div className="muted small">{e.actorKey ? `API key ${e.actorKey.prefix}…` : e.actor.startsWith("user:") ? "console user" : e.actor.split(":")[0]}</div>
                    </td>
                    <td className="action">
                      <IntentLink href={link({ action: e.action })} className="action-chip" title={`Only ${e.action} events`}>
                        <BreakAfterDots text={e.action} />
                      </IntentLink>
                    </td>
                    <td className="target">
                      <TargetLink base={base} tenant={tenant.slug} row={e} />
                      <div className="muted small">
                        {e.targetType.replace("_", " ")} ·{" "}
                        <IntentLink
                          // Its whole history: not only the events the other filters let through (console review).
                          href={link({ action: "", actor: "", from: null, to: null, type: e.targetType as AuditQuery["type"], target: e.targetId })}
                          title={`All events of ${e.targetType} ${e.targetId}`}
                        >
                          history
                        </IntentLink>
                      </div>
                    </td>
                    <td className="reason">{e.reason ? <q>{e.reason}</q> : <span className="muted">—</span>}</td>
                    <td className="change">
                      <ChangeCell row={e} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Audit log pages">
            <span>
              {page.rows.length} event{page.rows.length === 1 ? "" : "s"} shown, #{page.rows.at(-1)?.id}–#{page.rows[0]?.id}
            </span>
            <span className="row">
              {query.before || query.after ? <IntentLink href={link({})}>Newest</IntentLink> : null}
              {page.newer ? <IntentLink href={link({ after: page.newer })}>← Newer</IntentLink> : null}
              {page.older ? <IntentLink href={link({ before: page.older })}>Older →</IntentLink> : null}
            </span>
          </nav>
        </>
      )}
    </>
  );
}

// "webhook_connection.secrets_rotated" may wrap after its dots, never inside a word.
function BreakAfterDots({ text }: { text: string }) {
  return text.split(".").map((part, i) => (
    <Fragment key={i}>
      {i > 0 ? (
        <>
          .<wbr />
        </>
      ) : null}
      {part}
    </Fragment>
  ));
}

function TargetLink({ base, tenant, row }: { base: string; tenant: string; row: AuditRow }) {
  const id = <code title={row.targetId}>{row.targetId}</code>;
  switch (row.targetType) {
    case "operation":
      return <IntentLink href={traceHref(tenant, row.targetId, "audit")}>{id}</IntentLink>;
    case "tool":
      return <IntentLink href={`${base}/tools#tool-${row.targetId}`}>{id}</IntentLink>;
    default:
      return id;
  }
}

function ChangeCell({ row }: { row: AuditRow }) {
  const summary = summarizeChange(row.before, row.after);
  if (row.before === null && row.after === null) return <span className="muted">—</span>;
  return (
    <details className="json change-details">
      <summary>{summary || "details"}</summary>
      <div className="change-json">
        {row.before !== null ? <JsonView label="Before" value={row.before} open /> : <p className="muted small">Before: nothing (created)</p>}
        {row.after !== null ? <JsonView label="After" value={row.after} open /> : <p className="muted small">After: nothing</p>}
      </div>
    </details>
  );
}
