// An operation state, colour-coded the same way on every page.
export function StateBadge({ state }: { state: string }) {
  return <span className={`badge s-${state}`}>{state.replace("_", " ")}</span>;
}
