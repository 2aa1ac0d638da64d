// One line for a before/after pair, most telling facts first: "state processing → unknown ·
// attempt 2", "role viewer → operator"; for a creation, the after's key facts.
const first = ["state", "role", "disabledAt", "attempt", "reportedOutcome", "resourceId", "principal", "email", "via", "outcome"];
const skip = new Set(["updatedAt", "createdAt"]);

export function summarizeChange(before: unknown, after: unknown): string {
  // Nested objects (a tool's policy) compare leaf by leaf: "policy.leaseSeconds 30 → 60".
  const b = flatten(before);
  const a = flatten(after);
  const keys = Object.keys({ ...b, ...a })
    .filter((k) => !skip.has(k) && JSON.stringify(b[k]) !== JSON.stringify(a[k]) && (a[k] ?? null) !== null && typeof a[k] !== "object")
    // A new flag that is false, or an outcome that only repeats the new state, says nothing.
    .filter((k) => !(a[k] === false && !(k in b)) && !(k === "outcome" && a[k] === a.state))
    .sort((x, y) => rank(x) - rank(y));
  const parts = keys.map((k) => (k in b && b[k] !== null ? `${k} ${short(b[k])} → ${short(a[k])}` : `${k} ${short(a[k])}`));
  if (parts.length === 0 && Object.keys(a).length === 0 && Object.keys(b).length > 0) return "removed";
  if (parts.length === 0 && Object.keys(a).length > 0 && Object.keys(b).length > 0) return "no change";
  return parts.slice(0, 3).join(" · ") + (parts.length > 3 ? ` · +${parts.length - 3}` : "");
}

function rank(key: string): number {
  const i = first.indexOf(key);
  return i === -1 ? first.length : i;
}

function flatten(value: unknown, prefix = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  if (!isObject(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (isObject(v)) flatten(v, `${prefix}${k}.`, out);
    else out[`${prefix}${k}`] = v;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// Timestamps read as the time of day (UTC); long values are cut.
function short(v: unknown): string {
  if (typeof v === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(v)) return v.slice(11, 19);
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return text.length > 32 ? `${text.slice(0, 31)}…` : text;
}
