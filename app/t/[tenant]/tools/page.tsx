import type { Metadata } from "next";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { listTools } from "@/lib/tools/get-tool";
import { EmptyState } from "@/components/ui/empty-state";
import { PageHeader } from "@/components/ui/page-header";
import { TimeAgo } from "@/components/ui/time-ago";
import { formatHours, formatMs, formatSeconds } from "./_components/format";
import { EditToolButton } from "./_components/edit-tool-button";

export const metadata: Metadata = { title: "Tools" };

export const dynamic = "force-dynamic";

const hints = [
  { key: "readOnlyHint", label: "read-only", tone: "ok", title: "Does not change anything outside" },
  { key: "destructiveHint", label: "destructive", tone: "danger", title: "May destroy or overwrite data (MCP's default)" },
  { key: "idempotentHint", label: "idempotent", tone: "ok", title: "Calling it twice with the same arguments has no further effect" },
  { key: "openWorldHint", label: "open-world", tone: "info", title: "Talks to systems outside this one (MCP's default)" },
] as const;

// GET /t/{tenant}/tools – the tool registry: what each tool is, and the policy Tollgate applies to its calls
export default async function ToolsPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { user, tenant } = await requireConsole((await params).tenant);
  const tools = await listTools({ db: db(), tenantId: tenant.id });
  const canEdit = can(user.role, "administer");
  const now = Date.now();
  return (
    <>
      <PageHeader
        title="Tools"
        description={
          <>
            The tools agents may claim operations for, with their MCP annotations and the policy each claim gets. {canEdit ? "Edits apply to new claims and attempts; they are audited." : "Only admins can edit a policy."}
          </>
        }
      />
      {tools.length === 0 ? (
        <EmptyState title="No tools registered yet">
          A tool is registered from code with the admin API: <code>PUT /api/v1/tools/&lt;name&gt;</code> and a JSON body of description, annotations and
          policy. It appears here at once.
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="data tools-table">
            <caption className="visually-hidden">Registered tools and their policies</caption>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Annotations</th>
                <th scope="col" className="num" title="How long a claim holds the operation without a heartbeat">
                  Lease
                </th>
                <th scope="col" className="num" title="Attempts per operation before it fails">
                  Attempts
                </th>
                <th scope="col" title="Retry backoff: full jitter of min(cap, base·2^(n-1))">Backoff</th>
                <th scope="col" title="What an expired lease means">
                  Takeover
                </th>
                <th scope="col">Approval</th>
                <th scope="col" className="num" title="How long a finished result is kept for replays">
                  Retention
                </th>
                <th scope="col">Updated</th>
                {canEdit ? (
                  <th scope="col" className="sticky-end">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {tools.map((t) => (
                <tr key={t.name} id={`tool-${t.name}`}>
                  <td className="tool-name">
                    <code title={t.name}>{t.name}</code>
                    {t.description ? <div className="muted small">{t.description}</div> : null}
                  </td>
                  <td className="hints">
                    <span className="badges">
                      {hints.map((h) =>
                        t.annotations[h.key] ? (
                          <span key={h.key} className={`badge hint-${h.tone}`} title={h.title}>
                            {h.label}
                          </span>
                        ) : null,
                      )}
                      {hints.every((h) => !t.annotations[h.key]) ? <span className="muted">none</span> : null}
                    </span>
                  </td>
                  <td className="num">{formatSeconds(t.policy.leaseSeconds)}</td>
                  <td className="num">{t.policy.maxAttempts}</td>
                  <td>
                    {formatMs(t.policy.backoff.baseMs)} → {formatMs(t.policy.backoff.capMs)}
                  </td>
                  <td>
                    {t.policy.takeover === "deduplicated" ? (
                      <span title="The provider dedupes on the downstream key: another attempt may take over">deduplicated</span>
                    ) : (
                      <span title="An expired lease makes the outcome unknown">never</span>
                    )}
                  </td>
                  <td className="approval">
                    {t.policy.approval === "required" ? (
                      <>
                        <span className="badge warn">required</span> <span className="muted small">expires {formatSeconds(t.policy.approvalTtlSeconds)}</span>
                      </>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
                  <td className="num">{formatHours(t.policy.resultRetentionHours)}</td>
                  <td>
                    <TimeAgo at={t.updatedAt} now={now} />
                  </td>
                  {canEdit ? (
                    // Sticks to the table's right edge, so every row's Edit stays in view however wide the table gets.
                    <td className="sticky-end">
                      <EditToolButton tenant={tenant.slug} tool={t} />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
