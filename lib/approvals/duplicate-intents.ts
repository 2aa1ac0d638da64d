import type { Db } from "@/lib/db";
import type { Json } from "@/lib/operations/canonical-json";
import { diffLeaves } from "@/lib/operations/diff-paths";
import { visibleUnits } from "@/lib/console/visible-characters";

export type DuplicateIntent = {
  operationId: string;
  state: string;
  principal: string;
  createdAt: string;
  // The same Idempotency-Key as this one, from another principal: a key is deduplicated only
  // within its principal (the scope is tenant, principal, tool), so this is a second operation.
  sameKey: boolean;
  // [] when the args are identical; otherwise the (few) paths that differ.
  differingPaths: string[];
  // The same paths with each side's value, short: what tells "the amount was re-rounded" from
  // "another customer" at a glance. The approver is shown both documents' arguments anyway.
  differences: { path: string; here: string; there: string }[];
};

// A value as the console shows it beside its path: JSON, cut at this many characters.
const VALUE_CHARS = 60;

const WINDOW_MS = 24 * 60 * 60 * 1000;
// At most this many other operations of the tool are compared (newest first, index-backed).
const SCAN_LIMIT = 500;
// "Near-identical": at most this many leaf values differ (an amount re-rounded, a timestamp
// re-stamped by the agent) while the rest of the request is the same.
const NEAR_PATHS = 2;

// The classic agent bug: a retry mints a new Idempotency-Key, so the same intent arrives as a
// second operation that idempotency cannot catch. An approver should see it before saying yes:
// operations of the same tool and tenant in the 24 h before (and since) this one, under OTHER
// keys, with identical or near-identical args. Other principals' operations under the SAME key
// count too: idempotency never joins them to this one (two replicas of an agent configured with
// different principals, a rollout), so both would run; until 2026-12-02 they were left out.
export async function findDuplicateIntents(options: { db: Db; tenantId: string; operationId: string }): Promise<DuplicateIntent[]> {
  const { db, tenantId } = options;
  const op = await db.operation.findFirst({ where: { id: options.operationId, tenantId }, select: { tool: true, args: true, keyDigest: true, fingerprint: true, createdAt: true } });
  if (!op) return [];
  const others = await db.operation.findMany({
    where: { tenantId, tool: op.tool, createdAt: { gte: new Date(op.createdAt.getTime() - WINDOW_MS) }, NOT: { id: options.operationId } },
    orderBy: { createdAt: "desc" },
    take: SCAN_LIMIT,
    select: { id: true, state: true, principal: true, createdAt: true, fingerprint: true, args: true, keyDigest: true },
  });
  const out: DuplicateIntent[] = [];
  for (const other of others) {
    const leaves = other.fingerprint === op.fingerprint ? [] : diffLeaves(op.args as Json, other.args as Json, "args", NEAR_PATHS + 1);
    if (leaves.length > 0 && !nearIdentical(op.args as Json, other.args as Json, leaves.length)) continue;
    out.push({
      operationId: other.id,
      state: other.state,
      principal: other.principal,
      createdAt: other.createdAt.toISOString(),
      sameKey: other.keyDigest === op.keyDigest,
      differingPaths: leaves.map((d) => d.path),
      differences: leaves.map((d) => ({ path: d.path, ...shortPair(d.before, d.after) })),
    });
  }
  // Identical first, then by time.
  return out.sort((a, b) => a.differingPaths.length - b.differingPaths.length || b.createdAt.localeCompare(a.createdAt));
}

// The two values as JSON, each cut to VALUE_CHARS characters around where they start to differ
// (two notes alike for their first 100 characters showed the same text on both sides; console
// review), on whole visible characters (never half an emoji or of a family of them). A value that
// fits is shown whole; a cut one shows as much as the window holds. Invisible and
// direction-changing characters show as \uXXXX (see visible-characters), never cut in half.
export function shortPair(here: Json | undefined, there: Json | undefined): { here: string; there: string } {
  const a = visibleUnits(here === undefined ? "(absent)" : JSON.stringify(here));
  const b = visibleUnits(there === undefined ? "(absent)" : JSON.stringify(there));
  let same = 0;
  while (same < a.length && same < b.length && a[same] === b[same]) same++;
  const cut = (chars: string[]) => {
    if (chars.length <= VALUE_CHARS) return chars.join("");
    // Some context before the first difference, but never past the point where the window would run out of text.
    const from = Math.max(0, Math.min(same - 10, chars.length - (VALUE_CHARS - 1)));
    const room = VALUE_CHARS - (from > 0 ? 1 : 0);
    const end = Math.min(chars.length, from + room - (from + room < chars.length ? 1 : 0));
    return `${from > 0 ? "…" : ""}${chars.slice(from, end).join("")}${end < chars.length ? "…" : ""}`;
  };
  return { here: cut(a), there: cut(b) };
}

// Near-identical: few values differ AND most of the request is the same — the same keys at
// the top, and at least twice as many equal leaves as differing ones ({amount, currency,
// customer} with only the amount changed is near; with two of them changed it is another intent).
// Half was too little: every deploy of a new version ({service, version, commit, environment},
// two values new) was a "possible duplicate" of the last one, and approvers learn to skip a
// warning that is always there (console review, 2026-12-01 night).
function nearIdentical(a: Json, b: Json, differing: number): boolean {
  if (differing > NEAR_PATHS || !isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return leaves(a) - differing >= 2 * differing;
}

function leaves(v: Json): number {
  if (v === null || typeof v !== "object") return 1;
  const values = Array.isArray(v) ? v : Object.values(v);
  return values.reduce<number>((n, x) => n + leaves(x), 0);
}

function isObject(v: Json): v is { [key: string]: Json } {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
