import type { Db } from "@/lib/db";
import { webhookEventsTraceSource } from "@/lib/console/webhook-trace-source";
import { sideEffectsTraceSource } from "@/lib/side-effects/side-effect-trace-source";
import { probesTraceSource } from "@/lib/probes/probe-trace-source";
import { lateReportsTraceSource, outcomeWords } from "@/lib/operations/late-report-trace-source";
import { isStorableText } from "@/lib/console/storable-text";
import { attemptNumber, errorText, field } from "@/lib/console/trace-fields";

// The operation trace: ONE timeline, oldest first, of everything that happened to an
// operation. Each kind of event comes from a source (claim, attempts, approvals, resolutions,
// flags, counters); every audit event of the operation is either folded into the entry it
// describes or shown on its own, so none is ever hidden. New kinds (side effects, webhook
// deliveries) plug in as one more source with its own `load`, run in the same parallel wave:
//   defineSource({ name: "side-effects", load: (q) => q.db.sideEffect.findMany({ where: { tenantId: q.tenantId, operationId: q.operationId } }),
//     build: (ctx, rows) => rows.map((r) => entry({ key: `effect-${r.id}`, kind: "side-effect", ... })) })
// appended to `traceSources`; the page and the Timeline component need no change.

export type TraceTone = "ok" | "bad" | "warn" | "info";
export type TraceActor = { id: string; label: string };
// "time": absolute and relative ("in 10 min"); "clock": absolute only, for moments that no longer matter relative to now.
export type TraceField = { label: string; value: string; format?: "mono" | "time" | "clock" };
export type TraceAudit = { id: string; at: string; actor: TraceActor; action: string; reason: string | null; before: unknown; after: unknown };
export type TraceEntry = {
  key: string;
  at: string;
  kind: string;
  tone: TraceTone;
  title: string;
  actor: TraceActor | null;
  fields: TraceField[];
  json: { label: string; value: unknown }[];
  audit: TraceAudit[];
  // Tie-break for entries at the same instant (one transaction): lower first.
  rank: number;
};

export type TraceOperation = {
  id: string;
  state: string;
  tool: string;
  principal: string;
  keyDigest: string;
  fingerprint: string;
  args: unknown;
  result: unknown;
  error: { code?: string; message?: string } | null;
  resolution: Record<string, unknown> | null;
  attempts: number;
  maxAttempts: number;
  fencingToken: string | null;
  leaseExpiresAt: string | null;
  notBefore: string | null;
  downstreamKey: string;
  workflowId: string | null;
  traceId: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  resultExpiresAt: string | null;
  flaggedAt: string | null;
  flagReason: string | null;
  counts: { conflicts: number; mismatches: number; replays: number; takeovers: number; heartbeats: number };
};

// `now` is when the trace was read: ages on the page are relative to it, so server and browser agree.
export type OperationTrace = {
  operation: TraceOperation;
  timeline: TraceEntry[];
  leaseExpired: boolean;
  resolvable: boolean;
  // The lease expired and the next claim of the key takes over as a new attempt (takeover
  // "deduplicated", attempts left), rather than making the outcome unknown: what the page advises.
  nextClaimTakesOver: boolean;
  // Who made the latest resolution, readable ("demo-admin (key tgk_…)", not "api-key:key_…").
  resolvedBy: TraceActor | null;
  now: number;
};

type TraceQuery = { db: Db; tenantId: string; operationId: string };
type OperationRow = NonNullable<Awaited<ReturnType<typeof loadOperation>>>;
type AttemptRow = Awaited<ReturnType<typeof loadAttempts>>[number];
type ApprovalRow = Awaited<ReturnType<typeof loadApprovals>>[number];
type AuditRow = Awaited<ReturnType<typeof loadAudits>>[number];

export type TraceContext = {
  op: OperationRow;
  attempts: AttemptRow[];
  approvals: ApprovalRow[];
  now: Date;
  // The lease expired and the next claim of the key takes over (takeover "deduplicated", attempts left).
  nextClaimTakesOver: boolean;
  actor: (id: string) => TraceActor;
  actorOfAttempt: (attempt: AttemptRow) => TraceActor;
  // Removes and returns the audit events matching `match`, so each lands in exactly one entry.
  takeAudits: (match: (audit: AuditRow) => boolean) => TraceAudit[];
  has: (kind: string) => boolean;
};

export type TraceSource<T = undefined> = {
  name: string;
  load?: (query: TraceQuery) => Promise<T>;
  build: (ctx: TraceContext, rows: T) => TraceEntry[];
};

// Keeps each source's row type while the list holds them all.
function defineSource<T>(source: TraceSource<T>): TraceSource<unknown> {
  return source as TraceSource<unknown>;
}

export async function getOperationTrace(options: TraceQuery & { now?: Date }): Promise<OperationTrace | null> {
  // An id PostgreSQL cannot take (U+0000) names no operation; its queries would fail the page.
  if (!isStorableText(options.operationId)) return null;
  const query = { db: options.db, tenantId: options.tenantId, operationId: options.operationId };
  // One parallel wave: every query filters by tenant, so another tenant's id finds nothing.
  const [op, attempts, approvals, audits, keys, extra] = await Promise.all([
    loadOperation(query),
    loadAttempts(query),
    loadApprovals(query),
    loadAudits(query),
    loadKeys(query),
    Promise.all(traceSources.map((s) => (s.load ? s.load(query) : Promise.resolve(undefined)))),
  ]);
  if (!op) return null;
  const now = options.now ?? new Date();
  const leaseExpired = op.state === "processing" && op.leaseExpiresAt !== null && op.leaseExpiresAt <= now;
  const takeover = leaseExpired && op.attemptCount < op.maxAttempts
    ? (await options.db.tool.findUnique({ where: { tenantId_name: { tenantId: options.tenantId, name: op.tool } }, select: { takeover: true } }))?.takeover
    : undefined;
  const nextClaimTakesOver = takeover === "deduplicated";
  const ctx = traceContext({ op, attempts, approvals, audits, keys, now, nextClaimTakesOver });
  const entries: TraceEntry[] = [];
  traceSources.forEach((source, i) => entries.push(...source.build({ ...ctx, has: (k) => entries.some((e) => e.kind === k) }, extra[i])));
  entries.push(...ctx.takeAudits(() => true).map(auditEntry));
  entries.sort((a, b) => a.at.localeCompare(b.at) || a.rank - b.rank || a.key.localeCompare(b.key));
  const by = (op.resolution as { by?: unknown } | null)?.by;
  return {
    operation: summarize(op),
    timeline: entries,
    leaseExpired,
    resolvable: op.state === "unknown" || leaseExpired,
    nextClaimTakesOver,
    resolvedBy: typeof by === "string" ? ctx.actor(by) : null,
    now: now.getTime(),
  };
}

function loadOperation(q: TraceQuery) {
  return q.db.operation.findFirst({ where: { id: q.operationId, tenantId: q.tenantId } });
}
function loadAttempts(q: TraceQuery) {
  return q.db.attempt.findMany({ where: { tenantId: q.tenantId, operationId: q.operationId }, orderBy: { number: "asc" } });
}
function loadApprovals(q: TraceQuery) {
  return q.db.approval.findMany({ where: { tenantId: q.tenantId, operationId: q.operationId }, orderBy: { createdAt: "asc" } });
}
function loadAudits(q: TraceQuery) {
  return q.db.auditEvent.findMany({ where: { tenantId: q.tenantId, targetType: "operation", targetId: q.operationId }, orderBy: { id: "asc" } });
}
// The API keys named by the attempts and the audit actors, so "api-key:key_…" reads as a principal.
function loadKeys(q: TraceQuery) {
  return q.db.$queryRaw<{ id: string; principal: string; prefix: string }[]>`
    SELECT k.id, k.principal, k.prefix FROM api_key k
    WHERE k.tenant_id = ${q.tenantId}
      AND (k.id IN (SELECT a.api_key_id FROM attempt a WHERE a.tenant_id = ${q.tenantId} AND a.operation_id = ${q.operationId})
        OR 'api-key:' || k.id IN (SELECT e.actor FROM audit_event e
          WHERE e.tenant_id = ${q.tenantId} AND e.target_type = 'operation' AND e.target_id = ${q.operationId}))`;
}

function traceContext(data: {
  op: OperationRow;
  attempts: AttemptRow[];
  approvals: ApprovalRow[];
  audits: AuditRow[];
  keys: { id: string; principal: string; prefix: string }[];
  now: Date;
  nextClaimTakesOver: boolean;
}): Omit<TraceContext, "has"> {
  const keys = new Map(data.keys.map((k) => [k.id, k]));
  const actor = (id: string): TraceActor => {
    const key = id.startsWith("api-key:") ? keys.get(id.slice("api-key:".length)) : undefined;
    return { id, label: key ? `${key.principal} (key ${key.prefix}…)` : id.replace(/^user:/, "") };
  };
  let remaining = data.audits;
  return {
    op: data.op,
    attempts: data.attempts,
    approvals: data.approvals,
    now: data.now,
    nextClaimTakesOver: data.nextClaimTakesOver,
    actor,
    actorOfAttempt: (a) => (a.apiKeyId ? actor(`api-key:${a.apiKeyId}`) : { id: a.principal, label: a.principal }),
    takeAudits: (match) => {
      const taken = remaining.filter(match);
      remaining = remaining.filter((a) => !taken.includes(a));
      return taken.map((a) => ({
        id: a.id.toString(),
        at: a.createdAt.toISOString(),
        actor: actor(a.actor),
        action: a.action,
        reason: a.reason,
        before: a.before,
        after: a.after,
      }));
    },
  };
}

// --- sources -------------------------------------------------------------------------------

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const duration = (ms: number) =>
  ms < 1000 ? `${Math.max(0, ms)} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : ms < 3_600_000 ? `${Math.round(ms / 60_000)} min` : `${(ms / 3_600_000).toFixed(1)} h`;
const entry = (e: Omit<TraceEntry, "fields" | "json" | "audit" | "actor"> & Partial<TraceEntry>): TraceEntry => ({
  actor: null,
  fields: [],
  json: [],
  audit: [],
  ...e,
});

const attemptEndTitles: Record<string, { title: string; tone: TraceTone }> = {
  succeeded: { title: "succeeded", tone: "ok" },
  failed: { title: "failed", tone: "bad" },
  retryable_failure: { title: "failed (retryable)", tone: "warn" },
  unknown: { title: "reported an unknown outcome", tone: "warn" },
  lease_lost: { title: "lost its lease", tone: "warn" },
  taken_over: { title: "was taken over after its lease expired", tone: "warn" },
};

const attemptsSource = defineSource({
  name: "attempts",
  build: (ctx) =>
    ctx.attempts.flatMap((a) => {
      const started = ctx.takeAudits(
        (e) =>
          attemptNumber(e.after) === a.number &&
          ["operation.claimed", "operation.attempt_started", "operation.taken_over"].includes(e.action),
      );
      const isClaim = started.some((e) => e.action === "operation.claimed") || (a.number === 1 && a.startedAt.getTime() === ctx.op.createdAt.getTime());
      const takeover = started.some((e) => e.action === "operation.taken_over");
      const out: TraceEntry[] = [
        entry({
          key: `attempt-${a.number}-start`,
          at: a.startedAt.toISOString(),
          kind: isClaim ? "claim" : "attempt.start",
          tone: "info",
          rank: isClaim ? 0 : 2,
          title: isClaim ? `Claimed · attempt ${a.number} started` : takeover ? `Attempt ${a.number} took over` : `Attempt ${a.number} started`,
          actor: ctx.actorOfAttempt(a),
          fields: [
            ...field("Fencing token", a.fencingToken.toString(), "mono"),
            ...(a.outcome === null ? field("Lease expires", a.leaseExpiresAt.toISOString(), "time") : field("Lease was until", a.leaseExpiresAt.toISOString(), "clock")),
            ...field("Workflow", a.workflowId, "mono"),
            ...field("Trace id", a.traceId, "mono"),
            ...(isClaim ? field("Key digest", ctx.op.keyDigest.slice(0, 16), "mono") : []),
          ],
          audit: started,
        }),
      ];
      if (a.endedAt) {
        // Not a change a provider's webhook made (its audit names the event): that has an entry
        // of its own, at the event (webhook-trace-source.ts). Filed here, a webhook that made an
        // operation waiting to retry unknown read as part of the attempt's failure, minutes before.
        const ended = ctx.takeAudits(
          (e) =>
            attemptNumber(e.before) === a.number &&
            (e.after as { eventId?: unknown } | null)?.eventId === undefined &&
            // A late side-effect report that made the operation unknown is its own entry, not this attempt's end.
            (e.after as { sideEffect?: unknown } | null)?.sideEffect === undefined &&
            ["operation.completed", "operation.retry_scheduled", "operation.unknown", "operation.complete_agreed", "operation.attempt_lease_expired"].includes(e.action),
        );
        const how = attemptEndTitles[a.outcome ?? ""] ?? { title: "ended", tone: "info" as const };
        const provider = a.provider as { requestId?: string; resourceId?: string } | null;
        const notBefore = (ended.find((e) => e.action === "operation.retry_scheduled")?.after as { notBefore?: string } | null)?.notBefore;
        // A report that agreed with an earlier resolution (webhook or operator) changed no state:
        // its result is shown, and whether it became the stored one.
        const agreed = ended.find((e) => e.action === "operation.complete_agreed")?.after as { result?: unknown; resultStored?: boolean } | undefined;
        out.push(
          entry({
            key: `attempt-${a.number}-end`,
            at: a.endedAt.toISOString(),
            kind: "attempt.end",
            tone: how.tone,
            rank: 1,
            title: `Attempt ${a.number} ${how.title}`,
            actor: ended[0]?.actor ?? null,
            fields: [
              // A lost lease's end is when something closed it (a resolve, the reaper, a takeover),
              // maybe long after: "Ran for 25 min" under a 1-minute lease (console review). What
              // is known is how long its lease held.
              ...(a.outcome === "lease_lost"
                ? field("Lease held for", `${duration(Math.min(a.leaseExpiresAt.getTime(), a.endedAt.getTime()) - a.startedAt.getTime())}; how long the call ran is unknown`)
                : field("Ran for", duration(a.endedAt.getTime() - a.startedAt.getTime()))),
              ...field("State after", ended.map((e) => (e.after as { state?: string } | null)?.state).find(Boolean)),
              ...field("Error", errorText(a.error)),
              ...field("Provider request", provider?.requestId, "mono"),
              ...field("Provider resource", provider?.resourceId, "mono"),
              ...field("Retry not before", notBefore ? new Date(notBefore).toISOString() : null, "time"),
              ...(agreed ? field("Report", agreed.resultStored ? "agreed with the resolution; its result was stored" : "agreed with the resolution") : []),
            ],
            json: agreed?.result ? [{ label: "Result reported", value: agreed.result }] : [],
            audit: ended,
          }),
        );
      } else if (a.leaseExpiresAt <= ctx.now) {
        out.push(
          entry({
            key: `attempt-${a.number}-lease-expired`,
            at: a.leaseExpiresAt.toISOString(),
            kind: "attempt.lease-expired",
            tone: "warn",
            rank: 4,
            title: `Attempt ${a.number}'s lease expired without a report`,
            fields: field(
              "What now",
              ctx.nextClaimTakesOver
                ? "Nobody knows yet whether the call took effect: the next claim of its key takes over as a new attempt with the same downstream key."
                : "Nobody knows whether the call took effect: check the provider, then resolve.",
            ),
          }),
        );
      }
      return out;
    }),
});

const claimSource = defineSource({
  name: "claim",
  // Only when no attempt started with the claim (approval required, or the audit row is missing).
  build: (ctx) => {
    if (ctx.has("claim")) return [];
    const audit = ctx.takeAudits((e) => e.action === "operation.claimed");
    const after = audit[0]?.after as { state?: string } | undefined;
    return [
      entry({
        key: "claim",
        at: ctx.op.createdAt.toISOString(),
        kind: "claim",
        tone: "info",
        rank: 0,
        title: after?.state === "awaiting_approval" ? "Claimed · waiting for approval" : "Claimed",
        actor: audit[0]?.actor ?? { id: ctx.op.principal, label: ctx.op.principal },
        fields: [...field("Key digest", ctx.op.keyDigest.slice(0, 16), "mono"), ...field("Workflow", ctx.op.workflowId, "mono"), ...field("Trace id", ctx.op.traceId, "mono")],
        audit,
      }),
    ];
  },
});

const approvalsSource = defineSource({
  name: "approvals",
  build: (ctx) =>
    ctx.approvals.flatMap((a) => {
      const out = [
        entry({
          key: `approval-${a.id}-requested`,
          at: a.createdAt.toISOString(),
          kind: "approval.requested",
          tone: "warn",
          rank: 3,
          title: "Approval requested",
          actor: { id: a.requestedBy, label: a.requestedBy },
          fields: [...field("Approval", a.id, "mono"), ...field("Expires", a.expiresAt.toISOString(), "time")],
        }),
      ];
      if (a.state !== "pending" && a.decidedAt) {
        const decidedAt = a.decidedAt;
        const audit = ctx.takeAudits((e) => e.action.startsWith("approval.") && Math.abs(e.createdAt.getTime() - decidedAt.getTime()) < 2000);
        out.push(
          entry({
            key: `approval-${a.id}-decided`,
            at: decidedAt.toISOString(),
            kind: "approval.decided",
            tone: a.state === "approved" ? "ok" : "bad",
            rank: 3,
            title: `Approval ${a.state}`,
            actor: a.decidedBy ? ctx.actor(a.decidedBy) : null,
            fields: field("Reason", a.reason),
            audit,
          }),
        );
      }
      return out;
    }),
});

const resolutionTitles: Record<string, { title: string; tone: TraceTone }> = {
  succeeded: { title: "Resolved: succeeded", tone: "ok" },
  failed: { title: "Resolved: failed — nothing happened", tone: "bad" },
  retry: { title: "Resolved: retry allowed", tone: "warn" },
};

const resolutionsSource = defineSource({
  name: "resolutions",
  // Every resolution from the audit log (a "retry" can be followed by another one later);
  // the operation's own column, which holds only the latest, fills in when the log has none.
  build: (ctx) => {
    const audits = ctx.takeAudits((e) => e.action === "operation.resolved");
    const latest = ctx.op.resolution as Record<string, string | null> | null;
    const items = audits.length
      ? audits.map((a) => ({ at: a.at, actor: a.actor, reason: a.reason, from: (a.before as { state?: string } | null)?.state, r: (a.after ?? {}) as Record<string, string | null>, audit: [a] }))
      : latest?.at
        ? [{ at: new Date(latest.at).toISOString(), actor: ctx.actor(String(latest.by)), reason: latest.reason ?? null, from: latest.fromState ?? undefined, r: latest, audit: [] }]
        : [];
    return items.map((item, i) => {
      const how = resolutionTitles[item.r.outcome ?? ""] ?? { title: `Resolved: ${item.r.outcome}`, tone: "info" as const };
      return entry({
        key: `resolution-${i}`,
        at: item.at,
        kind: "resolution",
        tone: how.tone,
        rank: 5,
        title: how.title,
        actor: item.actor,
        fields: [
          ...field("Via", item.r.via),
          ...field("From state", item.from),
          ...field("Reason", item.reason),
          ...field("Resource id", item.r.resourceId, "mono"),
          ...field("Evidence", item.r.evidence),
        ],
        audit: item.audit,
      });
    });
  },
});

const flagSource = defineSource({
  name: "flag",
  build: (ctx) => {
    const audits = ctx.takeAudits((e) => e.action === "operation.complete_conflict");
    const fromAudits = audits.map((a, i) => {
      const after = (a.after ?? {}) as { reportedOutcome?: string; attempt?: number; earlierOutcome?: string; result?: unknown; error?: unknown };
      return entry({
        key: `flag-${i}`,
        at: a.at,
        kind: "flag",
        tone: "bad",
        rank: 6,
        title: `Flagged: attempt ${after.attempt ?? "?"} reported ${after.reportedOutcome ?? "an outcome"} ${after.earlierOutcome ? `after it had reported ${outcomeWords(after.earlierOutcome)}` : "after the resolution"}`,
        actor: a.actor,
        fields: [...field("Error reported", errorText(after.error))],
        json: after.result ? [{ label: "Result reported", value: after.result }] : [],
        audit: [a],
      });
    });
    // An operator who checked took a flag down (tollgate_clear_flag): which flag, and why.
    const cleared = ctx.takeAudits((e) => e.action === "operation.flag_cleared").map((a) => {
      const before = (a.before ?? {}) as { flagReason?: string };
      return entry({
        key: `flag-cleared-${a.id}`,
        at: a.at,
        kind: "flag",
        tone: "info",
        rank: 6,
        title: "Flag cleared",
        actor: a.actor,
        fields: [...field("The flag said", before.flagReason ?? null), ...field("Why", a.reason)],
        audit: [a],
      });
    });
    if (fromAudits.length || !ctx.op.flaggedAt) return [...fromAudits, ...cleared];
    return [
      ...cleared,
      entry({ key: "flag", at: ctx.op.flaggedAt.toISOString(), kind: "flag", tone: "bad", rank: 6, title: "Flagged", fields: field("Why", ctx.op.flagReason) }),
    ];
  },
});

// The paths a 422 stored (lib/operations/record-mismatch.ts), never values: "args.amount, args.items[2].sku".
// `more` says whether other paths differ beyond those listed; a record written before `more` was
// kept is taken as cut when it holds 50 paths, the most a 422 lists.
function mismatchPaths(value: unknown): string | null {
  const record = value as { paths?: unknown; more?: unknown } | null;
  const paths = record?.paths;
  if (!Array.isArray(paths) || paths.length === 0) return null;
  const text = paths.filter((p): p is string => typeof p === "string");
  const more = typeof record?.more === "boolean" ? record.more : text.length >= 50;
  return more ? `${text.join(", ")} (the first ${text.length}; more differ)` : text.join(", ");
}

const countersSource = defineSource({
  name: "counters",
  // Conflicts, replays and heartbeats are counted, not logged one by one: one entry each, at the latest.
  build: (ctx) => {
    const op = ctx.op;
    const out: TraceEntry[] = [];
    if (op.conflictCount > 0) {
      out.push(
        entry({
          key: "conflicts",
          at: (op.lastConflictAt ?? op.updatedAt).toISOString(),
          kind: "conflicts",
          tone: "warn",
          rank: 7,
          title: `${op.conflictCount} conflicting claim${op.conflictCount === 1 ? "" : "s"} (last one here)`,
          fields: [
            ...field("409 / 429 (busy, unknown, backoff)", op.conflictCount > op.mismatchCount ? String(op.conflictCount - op.mismatchCount) : null),
            ...field("422 (same key, different arguments)", op.mismatchCount ? String(op.mismatchCount) : null),
            ...field("Where the last 422's arguments differed", mismatchPaths(op.lastMismatch), "mono"),
          ],
        }),
      );
    }
    if (op.replayCount > 0) {
      out.push(
        entry({
          key: "replays",
          at: (op.lastReplayAt ?? op.updatedAt).toISOString(),
          kind: "replays",
          tone: "ok",
          rank: 7,
          title: `${op.replayCount} replay${op.replayCount === 1 ? "" : "s"}: retries got the stored result (last one here)`,
        }),
      );
    }
    if (op.heartbeatCount > 0) {
      out.push(
        entry({
          key: "heartbeats",
          at: (op.lastHeartbeatAt ?? op.updatedAt).toISOString(),
          kind: "heartbeats",
          tone: "info",
          rank: 7,
          title: `${op.heartbeatCount} heartbeat${op.heartbeatCount === 1 ? "" : "s"} extended the lease (last one here)`,
        }),
      );
    }
    return out;
  },
});

// Order matters only for audit matching: attempts take their audit events first.
export const traceSources: TraceSource<unknown>[] = [attemptsSource, claimSource, approvalsSource, resolutionsSource, flagSource, countersSource,
  defineSource(webhookEventsTraceSource),
  defineSource(sideEffectsTraceSource), defineSource(probesTraceSource), defineSource(lateReportsTraceSource)];

function auditEntry(a: TraceAudit): TraceEntry {
  const before = (a.before as { state?: string } | null)?.state;
  const after = (a.after as { state?: string } | null)?.state;
  return entry({
    key: `audit-${a.id}`,
    at: a.at,
    kind: "audit",
    tone: "info",
    rank: 8,
    title: before && after && before !== after ? `${a.action}: ${before} → ${after}` : a.action,
    actor: a.actor,
    audit: [a],
  });
}

function summarize(op: OperationRow): TraceOperation {
  return {
    id: op.id,
    state: op.state,
    tool: op.tool,
    principal: op.principal,
    // The raw key is never stored; even its digest is shortened on screen.
    keyDigest: op.keyDigest.slice(0, 16),
    fingerprint: op.fingerprint,
    args: op.args,
    result: op.result,
    error: op.error as TraceOperation["error"],
    resolution: op.resolution as TraceOperation["resolution"],
    attempts: op.attemptCount,
    maxAttempts: op.maxAttempts,
    fencingToken: op.fencingToken?.toString() ?? null,
    leaseExpiresAt: iso(op.leaseExpiresAt),
    notBefore: iso(op.notBefore),
    downstreamKey: op.downstreamKey,
    workflowId: op.workflowId,
    traceId: op.traceId,
    createdAt: op.createdAt.toISOString(),
    updatedAt: op.updatedAt.toISOString(),
    completedAt: iso(op.completedAt),
    resultExpiresAt: iso(op.resultExpiresAt),
    flaggedAt: iso(op.flaggedAt),
    flagReason: op.flagReason,
    counts: { conflicts: op.conflictCount, mismatches: op.mismatchCount, replays: op.replayCount, takeovers: op.takeoverCount, heartbeats: op.heartbeatCount },
  };
}
