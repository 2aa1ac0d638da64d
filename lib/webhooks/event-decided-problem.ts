import { ProblemError } from "@/lib/http/problem";

export type DecidedAnswer = { status?: string; decidedBy?: string | null; reason?: string | null };

const waiting = new Set(["unmatched", "unmapped", "contradicting"]);
// What a match without a note stores (tollgate_webhook_match): nobody wrote it, so it is not quoted.
const defaultNote = /^matched webhook event \S+ in the inbox$/;

// 409 for a match or an ignore of an event that is not as the operator saw it: decided by someone
// else first (what it is now, who decided and why, so nobody has to go looking; console review),
// or still waiting under another reason than the page showed. The event's status goes out as
// `eventStatus`: a problem's `status` is its HTTP status.
export function eventDecidedProblem(r: DecidedAnswer, seen?: string): ProblemError {
  const extras = { extras: { eventStatus: r.status, decidedBy: r.decidedBy ?? null } };
  if (r.status && waiting.has(r.status)) {
    return new ProblemError("invalid-state", `This event is ${r.status} now${seen ? `, not ${seen} as your page showed` : ""}; the inbox now shows it as it stands.`, extras);
  }
  const who = r.decidedBy ? ` by ${r.decidedBy.replace(/^user:/, "")}` : "";
  const note = r.reason && !defaultNote.test(r.reason) ? r.reason : null;
  const why = note ? ` ("${note.length > 200 ? `${note.slice(0, 199)}…` : note}")` : "";
  return new ProblemError("invalid-state", `This event was already ${r.status ?? "decided"}${who}${why}; the inbox now shows it as it stands.`, extras);
}
