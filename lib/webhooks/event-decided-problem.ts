import { ProblemError } from "@/lib/http/problem";

export type DecidedAnswer = { status?: string; decidedBy?: string | null; reason?: string | null };

// 409 for a match or an ignore of an event someone else decided first: what it is now, who
// decided it and why, so the operator does not have to go looking (console review). The event's
// status goes out as `eventStatus`: a problem's `status` is its HTTP status.
export function eventDecidedProblem(r: DecidedAnswer): ProblemError {
  const who = r.decidedBy ? ` by ${r.decidedBy.replace(/^user:/, "")}` : "";
  const why = r.reason ? ` ("${r.reason.length > 200 ? `${r.reason.slice(0, 199)}…` : r.reason}")` : "";
  return new ProblemError("invalid-state", `This event was already ${r.status ?? "decided"}${who}${why}; the inbox now shows it as it stands.`, {
    extras: { eventStatus: r.status, decidedBy: r.decidedBy ?? null },
  });
}
