// What a console form tells a person after a change the server did not confirm: a failed answer
// leaves the change in doubt when it is a 5xx, unless it is the 503 that says nothing was stored
// (lib/db/database-unavailable.ts). A 4xx, or that 503, means nothing was changed.
export function mayHaveBeenSaved(status: number, detail: string): boolean {
  return status >= 500 && !/nothing was stored/i.test(detail);
}
