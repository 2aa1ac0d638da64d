import type { TraceEntry, TraceSource, TraceTone } from "@/lib/console/operation-trace";
import { field } from "@/lib/console/trace-fields";

// The operation trace's side effects: one entry per recorded state of each named provider call
// (intent, sent, confirmed, …), from the audit events tollgate_record_side_effect writes, with
// the effect's own downstream key so an operator can look the call up at the provider.

type EffectRow = { name: string; provider: string; downstreamKey: string; state: string; createdAt: Date };
type Change = { sideEffect?: string; state?: string; provider?: string; attempt?: number; providerRequestId?: string | null; providerResourceId?: string | null };

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
    return entries;
  },
};
