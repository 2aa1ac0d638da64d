import type { Db } from "@/lib/db";
import { cutText } from "@/lib/console/storable-text";
import type { GuardedFetch } from "@/lib/http/egress";
import { readTextUpTo } from "@/lib/http/read-body";
import { evaluateProbe, type ProbeVerdict } from "@/lib/probes/evaluate-probe";
import { describeFetchFailure } from "@/lib/http/fetch-failure";
import { openProbe } from "@/lib/probes/probe-headers";
import { probeSchema, URL_AUTHORITY, type Probe } from "@/lib/probes/probe-schema";

type DueProbe = {
  operationId: string;
  tenantId: string;
  tool: string;
  downstreamKey: string;
  resourceId: string | null;
  probe: unknown;
  probeNumber: number;
  // The attempt the probe asks about: its verdict settles the operation only while this is still
  // the operation's token and the operation still unknown (tollgate_record_probe).
  fencingToken: bigint | null;
};

export type ProbeSettings = {
  // Backoff between probes of one operation: base·2^(n-1) seconds, capped (whole seconds).
  baseSeconds: number;
  capSeconds: number;
  // When the tool's probe does not say (policy.probe.maxProbes).
  defaultMaxProbes: number;
  batchSize: number;
};

export const defaultProbeSettings: ProbeSettings = { baseSeconds: 30, capSeconds: 3600, defaultMaxProbes: 10, batchSize: 20 };

const MAX_BODY = 64 * 1024;
// The probe schedule is kept in whole seconds.
const whole = (seconds: number) => Math.max(1, Math.round(seconds));

// The worker's reconciliation pass: takes the unknown operations whose probe is due (booking
// each probe before it runs, under SKIP LOCKED, so two workers never probe one operation at
// once), asks the provider, and records the answer. A conclusive answer resolves the operation
// through tollgate_resolve (via "probe"); "not found" and anything unreadable leave it unknown.
// `fetch` is the worker's, with its egress policy (lib/http/egress.ts). A verdict settles the
// operation only if it is still unknown under the attempt the probe was booked for.
export async function runDueProbes(options: {
  db: Db;
  fetch: GuardedFetch;
  // Opens the probe's sealed header values (probe-headers.ts).
  serverSecret: string;
  settings?: Partial<ProbeSettings>;
  log?: (msg: string, fields?: object) => void;
}) {
  const s = { ...defaultProbeSettings, ...options.settings };
  const due = await options.db.$queryRaw<DueProbe[]>`
    SELECT operation_id AS "operationId", tenant_id AS "tenantId", tool, downstream_key AS "downstreamKey",
      resource_id AS "resourceId", probe, probe_number AS "probeNumber", fencing_token AS "fencingToken"
    FROM tollgate_take_due_probes(${s.batchSize}::int, ${whole(s.baseSeconds)}::int, ${whole(s.capSeconds)}::int, ${s.defaultMaxProbes}::int)`;
  const results = await Promise.all(due.map((d) => probeOne(options.db, options.fetch, options.serverSecret, whole(s.capSeconds), d)));
  for (const r of results) options.log?.("probe", r);
  return { probed: results.length, resolved: results.filter((r) => r.resolved).length };
}

async function probeOne(
  db: Db,
  fetch: GuardedFetch,
  serverSecret: string,
  capSeconds: number,
  d: DueProbe,
): Promise<{ operationId: string; verdict: ProbeVerdict | "skipped"; resolved: boolean }> {
  let opened: unknown;
  try {
    opened = openProbe(d.probe, serverSecret);
  } catch {
    opened = undefined;
  }
  const parsed = probeSchema.safeParse(opened);
  let verdict: ProbeVerdict | "skipped";
  let status: number | null = null;
  let summary: string;
  let evidence: string | null = null;
  let resourceId: string | null = null;
  // A probe this server could not send for a reason the tool's admin must fix (headers sealed
  // under another TOLLGATE_SECRET_KEY, a definition that is no longer valid) asked the provider
  // nothing, so it is not counted against maxProbes: a wrong key for hours must not use up the
  // budget. Its next try waits the cap (1 h by default), and is audited only when the reason is
  // new (tollgate_record_probe: not when the operation's latest probe record is the same skip), so
  // the trace shows it once, from when it began. A probe that this operation's own values cannot
  // fill in (no resource id) is counted, so it ends: they will not change while the operation is unknown.
  let notCountedRetry: number | null = null;
  const notCounted = `not counted against maxProbes; tried again in ${capSeconds} s`;
  if (opened === undefined) {
    verdict = "skipped";
    notCountedRetry = capSeconds;
    summary = `probe ${d.probeNumber}: the probe's headers cannot be opened with this server's TOLLGATE_SECRET_KEY (changed since the tool was saved?): PUT the tool again with their values; ${notCounted}`;
  } else if (!parsed.success) {
    // Say where (field names only: an issue's message could in principle quote a value).
    const where = parsed.error.issues[0]?.path.join(".");
    verdict = "skipped";
    notCountedRetry = capSeconds;
    summary = `probe ${d.probeNumber}: the tool's probe definition is not valid${where ? ` (at ${where})` : ""}: PUT the tool again; ${notCounted}`;
  } else {
    const url = fillTemplate(parsed.data.url, d);
    if (url === null) {
      verdict = "skipped";
      summary = `probe ${d.probeNumber}: no resource id is known for this operation, and the probe URL needs one`;
    } else if (!URL.canParse(url)) {
      // A value filled into the host part (say a resource id) can make the URL invalid; the booked
      // probe is still recorded rather than failing the whole pass.
      verdict = "skipped";
      summary = `probe ${d.probeNumber}: the probe URL is not a valid URL with this operation's values`;
    } else {
      const answer = await ask(fetch, parsed.data, url);
      const where = `GET ${safeUrl(url)}`;
      if ("error" in answer) {
        verdict = "inconclusive";
        summary = `probe ${d.probeNumber}: ${where} failed: ${answer.error}`;
      } else {
        status = answer.status;
        evidence = cutText(answer.text, 2000);
        const read = evaluateProbe(parsed.data, answer);
        verdict = read.verdict;
        resourceId = read.resourceId ?? d.resourceId;
        summary = `probe ${d.probeNumber}: ${where} answered ${answer.status}: ${describe(read.verdict)}`;
      }
    }
  }
  const rows = await db.$queryRaw<{ r: { code: string } }[]>`
    SELECT tollgate_record_probe(${d.tenantId}, ${d.operationId}, ${d.fencingToken}::bigint, ${d.probeNumber}, ${verdict}, ${status}::int,
      ${summary}, ${resourceId}, ${evidence}, ${notCountedRetry}::int) AS r`;
  return { operationId: d.operationId, verdict, resolved: rows[0]?.r.code === "resolved" };
}

const descriptions: Record<ProbeVerdict, string> = {
  succeeded: "the provider has the effect (resolved by probe: succeeded)",
  // Unless the operation's side effects or a provider event say an effect may have happened
  // (tollgate_record_probe flags it then, and it stays unknown).
  failed: "the provider reports the call failed (resolved by probe: failed, unless evidence says an effect may have happened)",
  not_found: "not found, which is not proof that nothing happened: the operation stays unknown for an operator",
  inconclusive: "the answer matched no rule (or contradicted itself): the operation stays unknown",
};
const describe = (v: ProbeVerdict) => descriptions[v];

// The URL with the operation's values filled in; null when one is missing, "" (no URL) when the
// filled path has a dot segment: "." or ".." (a value such as "..", or "." beside a literal dot)
// moves the request up the provider's path, so the credential would ask a resource the probe
// never named. (encodeURIComponent leaves dots as they are, and turns "%" into "%25".)
function fillTemplate(template: string, d: DueProbe): string | null {
  const values: Record<string, string | null> = { downstreamKey: d.downstreamKey, resourceId: d.resourceId, operationId: d.operationId };
  let missing = false;
  const url = template.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    const v = values[name];
    if (v === null || v === undefined) {
      missing = true;
      return "";
    }
    return encodeURIComponent(v);
  });
  if (missing) return null;
  const path = url.replace(URL_AUTHORITY, "").split(/[?#]/)[0] ?? "";
  return path.split("/").some((segment) => segment === "." || segment === "..") ? "" : url;
}

// The trace and the audit log show where the probe went, never its query string (which may carry a token).
function safeUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.origin}${url.pathname}${url.search ? "?…" : ""}`;
}

async function ask(fetch: GuardedFetch, probe: Probe, url: string): Promise<{ status: number; body: unknown; text: string } | { error: string }> {
  try {
    const res = await fetch(url, {
      method: "GET",
      headers: { accept: "application/json", "user-agent": "Tollgate-Probe/1", ...probe.headers },
      signal: AbortSignal.timeout(probe.timeoutMs),
    });
    const text = await readTextUpTo(res.body, MAX_BODY);
    let body: unknown = null;
    try {
      body = text ? (JSON.parse(text) as unknown) : null;
    } catch {
      body = null;
    }
    return { status: res.status, body, text };
  } catch (error) {
    // Never the error's own message: it can quote a header value or the whole URL (probe-failure.ts).
    return { error: describeFetchFailure(error, probe.timeoutMs) };
  }
}
