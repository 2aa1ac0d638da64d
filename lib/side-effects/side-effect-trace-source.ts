import type { TraceAudit, TraceEntry, TraceSource, TraceTone } from "@/lib/console/operation-trace";
import { field } from "@/lib/console/trace-fields";

// The operation trace's side effects: one entry per recorded state of each named provider call
// (intent, sent, confirmed, …), from the audit events tollgate_record_side_effect writes, with
// the effect's own downstream key so an operator can look the call up at the provider. A report
// refused as lease-lost (its attempt was taken over, ended, or its lease ran out) changed nothing
// but is kept as evidence: an attempt whose outcome became unknown may say the charge went through.

type EffectRow = { name: string; provider: string; downstreamKey: string; state: string; createdAt: Date };
type Change = { sideEffect?: string; state?: string; provider?: string; attempt?: number; providerRequestId?: string | null; providerResourceId?: string | null };
// acted: what the report did to the operation (tollgate_side_effect_late_report), null for nothing.
type LateReport = Change & { reportingAttempt?: number; newestAttempt?: number; operationState?: string; acted?: "unknown" | "flagged" | null };

const tones: Record<string, TraceTone> = { intended: "info", sent: "info", confirmed: "ok", failed: "bad", unknown: "warn" };
const titles: Record<string, string> = {
  intended: "intended (recorded before the call)",
  sent: "sent to the provider",
  confirmed: "confirmed by the provider",
  failed: "failed at the provider",
  unknown: "outcome unknown",
};

export const sideEffectsTraceSource: TraceSource<EffectRow[]> = {
  name: "side-effects",
  load: (q) =>
    q.db.sideEffect.findMany({
      where: { tenantId: q.tenantId, operationId: q.operationId },
      select: { name: true, provider: true, downstreamKey: true, state: true, createdAt: true },
      orderBy: { createdAt: "asc" },
    }),
  build: (ctx, rows) => {
    const byName = new Map(rows.map((r) => [r.name, r]));
    const late = [
      ...ctx.takeAudits((e) => e.action === LATE_REPORT).map((a) => lateReportEntry(a, byName)),
      ...ctx.takeAudits((e) => e.action === "operation.unknown" && (e.after as Change | null)?.sideEffect !== undefined).map(becameUnknownEntry),
    ];
    const audits = ctx.takeAudits((e) => e.action.startsWith("side_effect."));
    const entries: TraceEntry[] = audits.map((a) => {
      const after = (a.after ?? {}) as Change;
      const name = after.sideEffect ?? "?";
      const state = after.state ?? a.action.slice("side_effect.".length);
      const row = byName.get(name);
      return {
        key: `side-effect-${a.id}`,
        at: a.at,
        kind: "side-effect",
        tone: tones[state] ?? "info",
        rank: 3,
        title: `Side effect "${name}" ${titles[state] ?? state}`,
        actor: a.actor,
        fields: [
          ...field("Provider", after.provider ?? row?.provider),
          ...field("Attempt", after.attempt === undefined ? null : String(after.attempt)),
          ...field("Downstream key", row?.downstreamKey, "mono"),
          ...field("Provider request", after.providerRequestId, "mono"),
          ...field("Provider resource", after.providerResourceId, "mono"),
        ],
        json: [],
        audit: [a],
      };
    });
    // An effect whose audit events are gone (they never are, but the row is the truth) still shows.
    const seen = new Set(entries.map((e) => e.title.split('"')[1]));
    for (const r of rows.filter((r) => !seen.has(r.name))) {
      entries.push({
        key: `side-effect-${r.name}`,
        at: r.createdAt.toISOString(),
        kind: "side-effect",
        tone: tones[r.state] ?? "info",
        rank: 3,
        title: `Side effect "${r.name}" ${titles[r.state] ?? r.state}`,
        actor: null,
        fields: [...field("Provider", r.provider), ...field("Downstream key", r.downstreamKey, "mono")],
        json: [],
        audit: [],
      });
    }
    return [...entries, ...late];
  },
};

const LATE_REPORT = "side_effect.late_report_refused";

function lateReportEntry(a: TraceAudit, byName: Map<string, EffectRow>): TraceEntry {
  const r = (a.after ?? {}) as LateReport;
  const name = r.sideEffect ?? "?";
  const state = r.state ?? "?";
  const superseded = r.newestAttempt !== undefined && r.reportingAttempt !== undefined && r.newestAttempt > r.reportingAttempt;
  return {
    key: `side-effect-late-${a.id}`,
    at: a.at,
    kind: "late-report",
    // Bad where it changed something or contradicts a failure; a confirmation of a succeeded
    // operation, or evidence for an unknown one, is for reading.
    tone: r.acted || (state === "confirmed" && r.operationState === "failed") ? "bad" : "warn",
    rank: 6,
    title: `Late report refused: attempt ${r.reportingAttempt ?? "?"} said side effect "${name}" ${titles[state] ?? state}${
      superseded ? ` after attempt ${r.newestAttempt} started` : ""}`,
    actor: a.actor,
    fields: [
      ...field("What it means", lateMeaning(state, r)),
      ...field("Provider", r.provider),
      ...field("Downstream key", byName.get(name)?.downstreamKey, "mono"),
      ...field("Provider request", r.providerRequestId, "mono"),
      ...field("Provider resource", r.providerResourceId, "mono"),
    ],
    json: [],
    audit: [a],
  };
}

// The operation made unknown by a refused side-effect report (or its repeat): the retry it waited
// for does not run. Its own entry, beside the report's.
function becameUnknownEntry(a: TraceAudit): TraceEntry {
  const r = (a.after ?? {}) as { attempt?: number; sideEffect?: string; sideEffectState?: string };
  return {
    key: `side-effect-unknown-${a.id}`,
    at: a.at,
    kind: "late-report",
    tone: "bad",
    rank: 6,
    title: `Outcome unknown: attempt ${r.attempt ?? "?"} said side effect "${r.sideEffect ?? "?"}" ${titles[r.sideEffectState ?? ""] ?? r.sideEffectState ?? ""}`,
    actor: a.actor,
    fields: [...field("What it means", "The effect may have happened, so the retry the operation waited for does not run until evidence or an operator settles it.")],
    json: [],
    audit: [a],
  };
}

// What a refused side-effect report did, and what it tells the operator who settles the operation.
function lateMeaning(state: string, r: LateReport): string {
  const done =
    r.acted === "unknown"
      ? "The side effect's record is unchanged, but the operation became unknown: the effect may have happened, so the retry it waited for does not run."
      : r.acted === "flagged"
        ? "The side effect's record is unchanged, but the operation was flagged for an operator."
        : "Not applied: the side effect's record and the operation are unchanged.";
  const settle = r.operationState === "unknown" || r.acted === "unknown" ? ", then resolve" : "";
  if (state === "confirmed") {
    if (r.operationState === "failed") return `${done} The provider confirmed this call although the operation is failed: check the provider.`;
    if (r.operationState === "succeeded" && !r.acted) return `${done} The provider confirmed this call, as the operation's outcome says.`;
    return `${done} The provider confirmed this call: the effect probably happened. Check the provider with these ids${settle}.`;
  }
  if (state === "failed") return `${done} The provider refused this call: if no other call reached it, nothing happened.`;
  return `${done} The call was ${state === "sent" ? "sent" : "made"} and its answer is not known: check the provider with these ids${settle}.`;
}
