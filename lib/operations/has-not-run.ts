// Nothing of the operation has run: no attempt was granted, so no provider saw its call, and no
// event can settle it or agree with it. The same rule as tollgate_not_run in SQL (migration
// 20261202181000), for the inbox's Match button and the match's refusal. No server imports:
// the inbox list is a client component.
export function hasNotRun(op: { state: string; attempts: number }): boolean {
  return op.state === "awaiting_approval" || ((op.state === "pending" || op.state === "rejected") && op.attempts === 0);
}
