import type { TraceEntry, TraceSource } from "@/lib/console/operation-trace";
import { errorText, field } from "@/lib/console/trace-fields";

// The operation trace's refused late reports: a complete that got 409 lease-lost because its
// attempt had been taken over, or its lease ran out and the outcome became unknown. The report
// changed nothing, but it is evidence (tollgate_complete keeps it in the audit log): a
// taken-over attempt that says it succeeded may have acted a second time, and one whose outcome
// became unknown may say what happened, for the operator who settles it.

type Report = {
  reportingAttempt?: number;
  newestAttempt?: number;
  reportedOutcome?: string;
  result?: unknown;
  error?: unknown;
  provider?: { requestId?: string; resourceId?: string } | null;
};

export const lateReportsTraceSource: TraceSource = {
  name: "late-reports",
  build: (ctx) =>
    ctx.takeAudits((e) => e.action === "operation.late_report_refused").map((a): TraceEntry => {
      const r = (a.after ?? {}) as Report;
      const takenOver = r.newestAttempt !== undefined && r.reportingAttempt !== undefined && r.newestAttempt > r.reportingAttempt;
      const succeeded = r.reportedOutcome === "succeeded";
      const resultResource = (r.result as { resourceId?: unknown } | null)?.resourceId;
      return {
        key: `late-report-${a.id}`,
        at: a.at,
        kind: "late-report",
        tone: succeeded ? "bad" : "warn",
        rank: 6,
        title: `Late report refused: attempt ${r.reportingAttempt ?? "?"} said ${r.reportedOutcome ?? "an outcome"}${takenOver ? ` after attempt ${r.newestAttempt} took over` : " after its lease expired"}`,
        actor: a.actor,
        fields: [
          ...field(
            "What it means",
            succeeded && takenOver
              ? "Both attempts may have reached the provider. With the same downstream key a deduplicating provider acted once; check that it did."
              : succeeded
                ? "The effect probably happened: check the provider, then resolve."
                : "Not applied: the operation's outcome is decided by evidence or an operator.",
          ),
          ...field("Provider request", r.provider?.requestId, "mono"),
          ...field("Provider resource", r.provider?.resourceId ?? (typeof resultResource === "string" ? resultResource : null), "mono"),
          ...field("Error reported", errorText(r.error)),
        ],
        json: r.result ? [{ label: "Result reported", value: r.result }] : [],
        audit: [a],
      };
    }),
};
