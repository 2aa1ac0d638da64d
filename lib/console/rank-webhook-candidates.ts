// Which operations an inbox event may be about, best first, each with the reasons shown to the
// operator. Signals, strongest first: the event itself names the operation (unmapped and
// contradicting events); a resource id of the operation (its result's, the provider resource
// id an attempt reported, or one a side effect recorded) equals a value in the payload; the same tool family (the
// tool name's prefix before the first dot) as the provider's events usually match, or as the
// connection's name or the event type's prefix; and closeness in time (the operation started
// shortly before the event arrived). Only operations still waiting for an outcome
// (processing or unknown) are proposed, apart from the one the event names.

export type CandidateOperation = {
  id: string;
  tool: string;
  state: string;
  principal: string;
  createdAt: Date;
  resourceId: string | null;
  attempts: number;
  flag?: { at: Date; reason: string } | null;
};

export type InboxCandidate = {
  id: string;
  tool: string;
  state: string;
  principal: string;
  createdAt: string;
  resourceId: string | null;
  // How many attempts it had when the inbox was read: a match says so, and is refused if another
  // ran since (the event was read against the attempt the operator saw).
  attempts: number;
  // Its flag when the inbox was read, or null: shown beside it, and a match says which flag it
  // saw (one raised since is a 409), since matching may take a flag down.
  flag: { at: string; reason: string } | null;
  // The start of the operation's arguments as JSON, for telling candidates apart; filled in by
  // the inbox after ranking, for the candidates shown only (webhook-inbox.ts).
  argsPreview: string | null;
  reasons: string[];
  // The event names this operation (its correlation value is the operation's id or downstream key).
  named: boolean;
};

const MAX_CANDIDATES = 5;
const MAX_VALUES = 500;

export const toolFamily = (tool: string): string => tool.split(".")[0] ?? tool;

// Every scalar in the payload as text (numbers too: a provider may send ids as numbers).
export function payloadValues(payload: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, depth: number) => {
    if (out.size >= MAX_VALUES || depth > 12) return;
    if (typeof v === "string" && v.length > 0 && v.length <= 500) out.add(v);
    else if (typeof v === "number" && Number.isFinite(v)) out.add(String(v));
    else if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else if (v !== null && typeof v === "object") Object.values(v).forEach((x) => walk(x, depth + 1));
  };
  walk(payload, 0);
  return out;
}

// "ticket" and "tickets" are one family: providers name events in the singular, tools often in the plural.
const sameWord = (a: string, b: string) => a === b || a === `${b}s` || b === `${a}s`;

function ago(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (Math.abs(minutes) < 1) return "less than a minute";
  if (Math.abs(minutes) < 120) return `${Math.abs(minutes)} min`;
  return `${Math.round(Math.abs(minutes) / 60)} h`;
}

export function rankCandidates(input: {
  event: { receivedAt: Date; eventType: string; connectionName: string; payload: unknown };
  named: CandidateOperation | null;
  families: Set<string>;
  pool: CandidateOperation[];
}): InboxCandidate[] {
  const { event } = input;
  const values = payloadValues(event.payload);
  const hints = [...input.families, toolFamily(event.connectionName), event.eventType.split(".")[0] ?? ""].filter(Boolean);
  const scored = input.pool
    .filter((op) => op.id !== input.named?.id)
    .map((op) => {
      const reasons: string[] = [];
      let score = 0;
      if (op.resourceId && values.has(op.resourceId)) {
        score += 100;
        reasons.push(`resource id ${op.resourceId} appears in the payload`);
      }
      const family = toolFamily(op.tool);
      if (hints.some((h) => sameWord(h, family))) {
        score += 20;
        reasons.push(`same tool family (${family}.*)`);
      }
      const before = event.receivedAt.getTime() - op.createdAt.getTime();
      // Close in time: started within the hour before the event (or just after: clocks differ).
      if (before >= -60_000 && before <= 3_600_000) {
        score += 10 - Math.min(9, Math.floor(before / 400_000));
        reasons.push(before >= 0 ? `started ${ago(before)} before the event` : "started just after the event arrived");
      }
      return { op, reasons, score };
    })
    .filter((c) => c.score > 0);
  // Close in time alone offered a Stripe event every ticket opened that hour (console review).
  // Once some operation is of the connection's families or holds a resource id of the payload,
  // those are the candidates; time alone still proposes some for a connection with no history.
  const grounded = scored.filter((c) => c.score >= 20);
  const ranked = (grounded.length ? grounded : scored)
    .sort((a, b) => b.score - a.score || Math.abs(event.receivedAt.getTime() - a.op.createdAt.getTime()) - Math.abs(event.receivedAt.getTime() - b.op.createdAt.getTime()))
    .slice(0, input.named ? MAX_CANDIDATES - 1 : MAX_CANDIDATES);
  const out = ranked.map(({ op, reasons }) => view(op, reasons, false));
  if (input.named) out.unshift(view(input.named, ["the event names this operation"], true));
  return out;
}

function view(op: CandidateOperation, reasons: string[], named: boolean): InboxCandidate {
  return { id: op.id, tool: op.tool, state: op.state, principal: op.principal, createdAt: op.createdAt.toISOString(), resourceId: op.resourceId, attempts: op.attempts,
    flag: op.flag ? { at: op.flag.at.toISOString(), reason: op.flag.reason } : null, argsPreview: null, reasons, named };
}
