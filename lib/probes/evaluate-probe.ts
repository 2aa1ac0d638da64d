import { cutText, isStorableText } from "@/lib/console/storable-text";
import type { Probe, ProbeMatch } from "@/lib/probes/probe-schema";

export type ProbeVerdict = "succeeded" | "failed" | "not_found" | "inconclusive";

// Reads the provider's answer by the probe's rules. Only `succeeded` and `failed` are
// conclusive. "Not found" is not evidence that nothing happened (the provider may not have
// indexed the call yet, or the lookup key may be wrong), and an answer that matches both
// succeeded and failed contradicts itself: both leave the operation unknown for an operator.
// A succeeded or failed rule without `status` reads 2xx answers only (answeredTheLookup).
export function evaluateProbe(probe: Probe, answer: { status: number; body: unknown }): { verdict: ProbeVerdict; resourceId: string | null } {
  if (probe.notFound && matches(probe.notFound, answer)) return { verdict: "not_found", resourceId: null };
  const succeeded = probe.succeeded ? settles(probe.succeeded, answer) : false;
  const failed = probe.failed ? settles(probe.failed, answer) : false;
  if (succeeded === failed) return { verdict: "inconclusive", resourceId: null };
  const found = probe.resourceIdPath ? readPath(answer.body, probe.resourceIdPath) : undefined;
  // JSON.parse turns an escaped "\u0000" (or half a surrogate pair) into text PostgreSQL refuses:
  // the probe's record then failed as a whole, every pass, spending the probe budget on nothing.
  // Such an id names nothing the operation can be found by; the verdict still stands.
  const text = typeof found === "string" || typeof found === "number" ? String(found) : null;
  const resourceId = text !== null && isStorableText(text) ? cutText(text, 500) : null;
  return { verdict: succeeded ? "succeeded" : "failed", resourceId };
}

// Only a 2xx is the provider's account of the lookup. A 429, 408 or 5xx says it could not
// answer now, a 401/403 that the probe's credential is wrong, a 404 that it found nothing: none
// says anything about the operation, though their JSON bodies often carry the very field a rule
// reads ("failed": {"path": "error"} would read Stripe's 500, or its 401 to a rotated key, as a
// failed charge, for every unknown operation of the tool). A rule that names such a status
// applies to it as written.
const answeredTheLookup = (status: number) => status >= 200 && status <= 299;

function settles(rule: ProbeMatch, answer: { status: number; body: unknown }): boolean {
  if (!rule.status && !answeredTheLookup(answer.status)) return false;
  return matches(rule, answer);
}

function matches(rule: ProbeMatch, answer: { status: number; body: unknown }): boolean {
  if (rule.status && !rule.status.includes(answer.status)) return false;
  if (rule.path === undefined) return true;
  const value = readPath(answer.body, rule.path);
  if (rule.equals === undefined) return value !== undefined && value !== null;
  return rule.equals.some((expected) => expected === value);
}

// Own properties only, so a path can never reach into the prototype ("__proto__", "constructor").
export function readPath(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
