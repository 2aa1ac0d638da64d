import type { TraceEntry, TraceSource, TraceTone } from "@/lib/console/operation-trace";

// The operation trace's reconciliation probes: one entry per probe the worker sent for an
// unknown operation, from the audit events tollgate_record_probe writes. A conclusive probe is
// followed (same instant) by the resolution it made, whose "Via" reads "probe". A stale probe
// (booked for an attempt the operation has since moved on from, or recorded by a worker running
// code from before probes carried their attempt's token) settled nothing, whatever it found; nor
// did one recorded after an operator or a webhook had settled the operation. A probe that could
// not be sent for the same reason again and again is recorded once, when the reason began. A
// verdict that contradicts the evidence (a "failed" while side effects may have happened or a
// provider event said succeeded; either verdict against an outcome settled meanwhile) flagged
// the operation and settled nothing.

type ProbeAfter = { probe?: number; verdict?: string; status?: number | null; resolved?: string; attempt?: number | null; contradicts?: string | null };

const outcomes: Record<string, { title: string; tone: TraceTone }> = {
  succeeded: { title: "found the effect: resolved by probe", tone: "ok" },
  failed: { title: "says the call failed: resolved by probe", tone: "bad" },
  not_found: { title: "not found: inconclusive, stays unknown", tone: "warn" },
  inconclusive: { title: "inconclusive: stays unknown", tone: "warn" },
  skipped: { title: "could not be sent", tone: "warn" },
};
// What a probe found, for the ones that changed nothing (stale, or after the operation was settled).
const foundWords: Record<string, string> = {
  succeeded: "found the effect",
  failed: "said the call failed",
  not_found: "found nothing",
  inconclusive: "was inconclusive",
  skipped: "could not be sent",
};

export const probesTraceSource: TraceSource<undefined> = {
  name: "probes",
  build: (ctx) =>
    ctx.takeAudits((e) => e.action === "operation.probed").map((a): TraceEntry => {
      const after = (a.after ?? {}) as ProbeAfter;
      const how = outcomes[after.verdict ?? ""] ?? { title: after.verdict ?? "done", tone: "info" as const };
      const conclusive = after.verdict === "succeeded" || after.verdict === "failed";
      const stale = after.resolved === "stale";
      // Settled meanwhile (records from before fencing tokens: a conclusive verdict not "resolved").
      const settled = after.resolved === "already-settled" || (conclusive && !stale && after.resolved !== "resolved");
      const words = foundWords[after.verdict ?? ""] ?? after.verdict ?? "done";
      // Flagged, not applied (tollgate_record_probe): what it contradicts, in the flag's words.
      const contradicts = typeof after.contradicts === "string" ? after.contradicts : null;
      const title = contradicts
        ? `${words}, but ${contradicts}: ${after.resolved === "contradicting" ? "not applied, the operation stays unknown" : "nothing changed"} (flagged)`
        : stale
        ? after.attempt == null
          ? `${words}, but it was recorded by a worker running older code, which does not say what attempt it asked about: nothing settled`
          : `${words}, but it asked about attempt ${after.attempt} and the operation has moved on: nothing settled`
        : settled
          ? `${words}, but the operation was already settled: nothing changed`
          : how.title;
      return {
        key: `probe-${a.id}`,
        at: a.at,
        kind: "probe",
        tone: contradicts ? "bad" : stale || settled ? "info" : how.tone,
        rank: 4,
        title: `Probe ${after.probe ?? "?"} ${title}`,
        actor: a.actor,
        fields: [
          ...(after.status ? [{ label: "Provider answered", value: String(after.status) }] : []),
          ...(a.reason ? [{ label: "Reason", value: a.reason }] : []),
        ],
        json: [],
        audit: [a],
      };
    }),
};
