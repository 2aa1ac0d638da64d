import { IntentLink } from "@/components/ui/intent-link";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { overviewStats, type Count } from "@/lib/console/overview-stats";
import { serializeOperationsQuery, type OperationStateName, type OperationsQuery } from "@/lib/console/operations-query";
import { BarChart } from "@/components/ui/bar-chart";
import { EmptyState } from "@/components/ui/empty-state";
import { PageHeader } from "@/components/ui/page-header";
import { AutoRefresh } from "@/components/ui/auto-refresh";
import { formatDuration } from "@/components/ui/format-age";
import { utcDateTime } from "@/components/timeline/format-time";
import { StatCard } from "../_components/stat-card";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Overview" };

export const dynamic = "force-dynamic";

// GET /t/{tenant} – overview: what is open now, how the last 24 h went, and where agents collide
export default async function OverviewPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { user, tenant } = await requireConsole((await params).tenant);
  const canAdminister = can(user.role, "administer");
  const stats = await overviewStats({ db: db(), tenantId: tenant.id });
  const base = `/t/${tenant.slug}`;
  const now = new Date(stats.now).getTime();
  const ops = (query: Partial<OperationsQuery>) => `${base}/operations${serializeOperationsQuery(query)}`;
  const byState = (state: OperationStateName, recent = false) => ops({ state: [state], ...(recent ? { from: new Date(stats.since) } : {}) });
  const endedTotal = sum(Object.values(stats.ended));
  const openTotal = sum(Object.values(stats.open));
  const claims = stats.claimsPerMinute.reduce((total, p) => total + p.value, 0);
  const waiting = sum([stats.open.unknown, stats.expiredLeases]);
  const oldestAge = stats.oldestUnknown ? formatDuration(now - new Date(stats.oldestUnknown.createdAt).getTime()) : null;

  if (openTotal.value + endedTotal.value === 0 && claims === 0 && stats.topConflictTools.length === 0) {
    return (
      <>
        <PageHeader title={`${tenant.name}: overview`} description="Open work, the last 24 hours, and where agents collide, once there is something to show." />
        <EmptyState title="No operations in the last 24 hours">
          <ol className="getting-started">
            <li>
              Register the tools agents call: <code>PUT /api/v1/tools/&lt;name&gt;</code> with an admin key (see <IntentLink href={`${base}/tools`}>Tools</IntentLink>).
            </li>
            <li>
              Give each agent an API key of its own ({canAdminister ? <IntentLink href={`${base}/api-keys`}>API keys</IntentLink> : "an admin creates it"}).
            </li>
            <li>
              Agents claim with <code>POST /api/v1/operations</code> and an <code>Idempotency-Key</code>; each claim shows up here within a second.
            </li>
          </ol>
        </EmptyState>
      </>
    );
  }

  return (
    <>
      <PageHeader
        title={`${tenant.name}: overview`}
        actions={<AutoRefresh page="overview" />}
        description={
          <>
            Open work right now, and the last 24 hours up to <time dateTime={stats.now}>{utcDateTime(stats.now).slice(0, 16)} UTC</time>.
          </>
        }
      />

      {stats.oldestUnknown ? (
        <div className="notice warn-notice overview-alert" role="status">
          <strong>
            {show(waiting)} operation{waiting.value === 1 ? " needs" : "s need"} a person.
          </strong>{" "}
          The oldest unknown outcome ({stats.oldestUnknown.tool}, <IntentLink href={`${base}/operations/${stats.oldestUnknown.id}`}>{stats.oldestUnknown.id}</IntentLink>) has
          waited <strong>{oldestAge}</strong>.{" "}
          <IntentLink href={`${base}/reconcile`}>Open the reconcile queue →</IntentLink>
        </div>
      ) : null}

      <div className="overview-groups">
        <section aria-labelledby="open-now">
          <h2 id="open-now" className="section-title">
            Open now <span className="muted">({show(openTotal)})</span>
          </h2>
          <div className="cards">
            <StatCard label="Unknown outcome" value={stats.open.unknown} href={byState("unknown")} tone={stats.open.unknown.value ? "bad" : undefined}>
              {oldestAge ? `oldest ${oldestAge}` : "none waiting"}
            </StatCard>
            <StatCard label="Processing" value={stats.open.processing} href={byState("processing")}>
              {stats.expiredLeases.value ? <span className="warn-text">{show(stats.expiredLeases)} with an expired lease</span> : "all leases live"}
            </StatCard>
            <StatCard label="Pending" value={stats.open.pending} href={byState("pending")}>
              retry or approved, not yet claimed
            </StatCard>
            <StatCard label="Awaiting approval" value={stats.open.awaiting_approval} href={byState("awaiting_approval")}>
              a person decides
            </StatCard>
            <StatCard label="Flagged" value={stats.flagged} href={ops({ flagged: true })} tone={stats.flagged.value ? "bad" : undefined}>
              evidence disagrees with the outcome
            </StatCard>
          </div>
        </section>

        <section aria-labelledby="ended-24h">
          <h2 id="ended-24h" className="section-title">
            Claimed in the last 24 h and ended <span className="muted">({show(endedTotal)})</span>
          </h2>
          <div className="cards">
            <StatCard label="Succeeded" value={stats.ended.succeeded} href={byState("succeeded", true)} tone="ok">
              {percent(stats.ended.succeeded, endedTotal)}
            </StatCard>
            <StatCard label="Failed" value={stats.ended.failed} href={byState("failed", true)}>
              {percent(stats.ended.failed, endedTotal)}
            </StatCard>
            <StatCard label="Rejected" value={stats.ended.rejected} href={byState("rejected", true)}>
              approval refused or expired
            </StatCard>
            <StatCard label="Claims" value={{ value: claims, capped: stats.activity.capped }}>
              {stats.activity.capped ? `since ${stats.activity.from.slice(11, 16)} UTC (busy: newest 50,000 events)` : "new operations and attempts"}
            </StatCard>
          </div>
        </section>
      </div>

      <div className="panels overview-panels">
        <section className="panel" aria-label="Claims per minute">
          <BarChart title="Claims per minute, last 24 h" points={chartPoints(stats.claimsPerMinute)} height={110} />
          <p className="muted small chart-note">
            Each claim that created an operation or started an attempt (retry or takeover), from the audit log. Replays and 409/422 answers are counted per tool below.
            {stats.activity.capped ? <strong> Busy tenant: only the newest events are read, so bars before {stats.activity.from.slice(11, 16)} UTC are not counted.</strong> : null}
          </p>
        </section>
        <section className="panel" aria-label="Unknown outcomes per hour">
          <BarChart
            title="Unknown outcomes per hour, last 24 h"
            points={chartPoints(stats.unknownsPerHour)}
            height={110}
            color="#c2410c"
          />
          <p className="muted small chart-note">
            Leases that expired without a report, and agents that reported &ldquo;unknown&rdquo;; whether resolved since or not.
            {stats.activity.capped ? <strong> Counted from {stats.activity.from.slice(11, 16)} UTC only (busy tenant).</strong> : null}
          </p>
        </section>
      </div>

      <section className="panel overview-conflicts" aria-labelledby="top-conflicts">
        <h2 id="top-conflicts">Top tools by conflicts, last 24 h</h2>
        {stats.conflictsFrom.capped ? (
          <p className="muted small">Busy tenant: counted over the newest 20,000 operations, claimed since {stats.conflictsFrom.from.slice(11, 16)} UTC.</p>
        ) : null}
        {stats.topConflictTools.length === 0 ? (
          <p className="muted" role="status">
            No conflicts in the last 24 hours: no claim was answered 409 (in progress, outcome unknown), 422 (key reused with other arguments) or 429 (backoff).
          </p>
        ) : (
          <div className="table-wrap">
            <table className="data conflict-tools">
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  <th scope="col" className="num">Conflicts</th>
                  <th scope="col" className="num" title="Idempotency-Key reused with different arguments">of which 422</th>
                  <th scope="col" className="num" title="409 in progress / outcome unknown, 429 backoff">of which 409/429</th>
                  <th scope="col" className="num">Replays (200)</th>
                  <th scope="col" className="num">Takeovers</th>
                  <th scope="col" className="num">Operations</th>
                  <th scope="col">
                    <span className="visually-hidden">Links</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {stats.topConflictTools.map((t) => (
                  <tr key={t.tool}>
                    <td className="c-tool" title={t.tool}>
                      <code>{t.tool}</code>
                    </td>
                    <td className="num">
                      <strong>{t.conflicts}</strong>
                    </td>
                    <td className="num">{t.mismatches}</td>
                    <td className="num">{t.conflicts - t.mismatches}</td>
                    <td className="num">{t.replays}</td>
                    <td className="num">{t.takeovers}</td>
                    <td className="num">{t.operations}</td>
                    <td>
                      <IntentLink href={ops({ tool: t.tool, conflicts: true, from: new Date(stats.since) })}>Operations with conflicts →</IntentLink>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

    </>
  );
}

// Bars are labelled with their UTC start time; the axis shows where the window starts and ends.
function chartPoints(points: { at: string; value: number }[]): { label: string; value: number }[] {
  return points.map((p, i) => ({
    label: `${p.at.slice(11, 16)} UTC${i === 0 ? " (24 h ago)" : i === points.length - 1 ? " (now)" : ""}`,
    value: p.value,
  }));
}

function percent(part: Count, whole: Count): string {
  return whole.value && !whole.capped ? `${Math.round((part.value / whole.value) * 100)} %` : "";
}

function sum(counts: Count[]): Count {
  return { value: counts.reduce((total, c) => total + c.value, 0), capped: counts.some((c) => c.capped) };
}

// A capped count reads "10,000+": exact below the cap, a floor above it.
function show(count: Count): string {
  return `${count.value.toLocaleString("en-US")}${count.capped ? "+" : ""}`;
}
