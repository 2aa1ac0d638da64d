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
  // What the reporting attempt itself had reported before (an attempt outcome), if it had.
  earlierOutcome?: string | null;
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
      const earlier = r.earlierOutcome ? outcomeWords(r.earlierOutcome) : null;
      const after = earlier
        ? takenOver
          ? ` after it had reported ${earlier} and attempt ${r.newestAttempt} started`
          : ` after it had reported ${earlier}`
        : takenOver
          ? ` after attempt ${r.newestAttempt} took over`
          : " after its lease expired";
      const resultResource = (r.result as { resourceId?: unknown } | null)?.resourceId;
      return {
        key: `late-report-${a.id}`,
        at: a.at,
        kind: "late-report",
        tone: succeeded ? "bad" : "warn",
        rank: 6,
        title: `Late report refused: attempt ${r.reportingAttempt ?? "?"} said ${r.reportedOutcome ?? "an outcome"}${after}`,
        actor: a.actor,
        fields: [
          ...field("What it means", meaning({ succeeded, earlier, takenOver })),
          ...field("Provider request", r.provider?.requestId, "mono"),
          ...field("Provider resource", r.provider?.resourceId ?? (typeof resultResource === "string" ? resultResource : null), "mono"),
          ...field("Error reported", errorText(r.error)),
        ],
        json: r.result ? [{ label: "Result reported", value: r.result }] : [],
        audit: [a],
      };
    }),
};

// What a refused late report tells the operator who settles the operation.
function meaning(r: { succeeded: boolean; earlier: string | null; takenOver: boolean }): string {
  if (!r.succeeded) return "Not applied: the operation's outcome is decided by evidence or an operator.";
  if (r.earlier && r.takenOver) {
    return `It first said ${r.earlier}, and a retry followed: if this later report is right, both attempts acted. With the same downstream key a deduplicating provider acted once; check the provider.`;
  }
  if (r.earlier) return `It first said ${r.earlier}: if this later report is right, the effect happened, and a retry would act again. Check the provider before any retry.`;
  if (r.takenOver) return "Both attempts may have reached the provider. With the same downstream key a deduplicating provider acted once; check that it did.";
  return "The effect probably happened: check the provider, then resolve.";
}

// An attempt's outcome as it reads in a sentence (as tollgate_outcome_words says it in SQL).
export function outcomeWords(outcome: string): string {
  if (outcome === "retryable_failure") return "failed (retryable)";
  // Closed by a settle, the reaper or a takeover: what it reported is in the earlier audit event.
  if (outcome === "lease_lost" || outcome === "taken_over") return "an earlier report";
  return outcome.replace("_", " ");
}
