// How long a console form waits for its answer. A request stuck on the server (a lock, a dead
// connection) would otherwise keep its dialog busy, which nothing closes while busy, for ever; cut
// off, the change is in doubt like any other unanswered one.
export const CONSOLE_ANSWER_WITHIN_MS = 30_000;

const timedOut = (error: unknown) => (error as { name?: unknown } | null)?.name === "TimeoutError";

// What a form says when its request got no answer: none in time, or no connection at all.
export function noAnswer(error: unknown, withinMs: number): string {
  const within = withinMs >= 1000 ? `${Math.round(withinMs / 1000)} s` : `${withinMs} ms`;
  return timedOut(error) ? `The server did not answer within ${within}.` : "The server could not be reached.";
}

// What a console form tells a person after a change the server did not confirm: a failed answer
// leaves the change in doubt when it is a 5xx, unless it is the 503 that says nothing was stored
// (lib/db/database-unavailable.ts). A 4xx, or that 503, means nothing was changed.
export function mayHaveBeenSaved(status: number, detail: string): boolean {
  return status >= 500 && !/nothing was stored/i.test(detail);
}
