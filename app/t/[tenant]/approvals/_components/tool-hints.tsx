import type { ApprovalDetail } from "@/lib/approvals/approval-detail";

// The annotations an approver must weigh, as badges: what kind of action is this?
export function ToolHints({ tool }: { tool: NonNullable<ApprovalDetail["tool"]> }) {
  const hints = [
    tool.destructive ? { label: "destructive", tone: "danger", title: "May destroy or overwrite data" } : null,
    tool.openWorld ? { label: "open-world", tone: "info", title: "Talks to systems outside this one" } : null,
    tool.idempotent ? null : { label: "not idempotent", tone: "warn", title: "Running it twice may have two effects" },
    tool.readOnly ? { label: "read-only", tone: "ok", title: "Changes nothing outside" } : null,
  ].filter((h) => h !== null);
  return (
    <span className="badges" aria-label="Tool annotations">
      {hints.map((h) => (
        <span key={h.label} className={`badge ${h.tone === "warn" ? "warn" : `hint-${h.tone}`}`} title={h.title}>
          {h.label}
        </span>
      ))}
    </span>
  );
}
