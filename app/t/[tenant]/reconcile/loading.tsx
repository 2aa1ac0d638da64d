// Shown while the queue loads.
export default function Loading() {
  return (
    <div className="stack" aria-busy="true">
      <div className="page-head">
        <h1>Reconcile</h1>
      </div>
      <p role="status" className="muted">
        Loading the queue…
      </p>
      {Array.from({ length: 8 }, (_, i) => (
        <div key={i} className="skeleton" style={{ height: 28 }} />
      ))}
    </div>
  );
}
