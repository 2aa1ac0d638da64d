import type { Json } from "@/lib/operations/canonical-json";

// The paths where two argument documents differ, such as "args.amount" or
// "args.items[2].sku". Only paths: a 422 must never echo a stored value.
export function diffPaths(before: Json, after: Json, base = "args", limit = 50): string[] {
  return diffLeaves(before, after, base, limit).map((d) => d.path);
}

// The same walk with the two values at each path (undefined where one side lacks it): for the
// console, whose readers may see both documents (an approver comparing near-duplicates).
export type LeafDifference = { path: string; before: Json | undefined; after: Json | undefined };

export function diffLeaves(before: Json, after: Json, base = "args", limit = 50): LeafDifference[] {
  const out: LeafDifference[] = [];
  walk(before, after, base, out, limit);
  return out;
}

function walk(a: Json | undefined, b: Json | undefined, path: string, out: LeafDifference[], limit: number): void {
  if (out.length >= limit) return;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`, out, limit);
    return;
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    // Own properties only: a["__proto__"] on an object without that key is Object.prototype.
    for (const key of keys) walk(own(a, key), own(b, key), childPath(path, key), out, limit);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, before: a, after: b });
}

function own(v: { [key: string]: Json }, key: string): Json | undefined {
  return Object.hasOwn(v, key) ? v[key] : undefined;
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// Keys that are not plain identifiers are quoted so the path stays unambiguous.
function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
