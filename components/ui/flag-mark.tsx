// The "flagged" mark beside an operation's state where a person may settle it (inbox candidates,
// the reconcile queue): its reason in the title, since settling it takes the flag down.
export function FlagMark({ reason }: { reason: string }) {
  return (
    <span className="badge danger" title={`Flagged: ${reason}`}>
      flagged
    </span>
  );
}
