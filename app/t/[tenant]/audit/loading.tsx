// Shown while the audit log loads.
export default function Loading() {
  return (
    <div className="stack" aria-busy="true">
      <div className="page-head">
        <h1>Audit log</h1>
      </div>
      <p role="status" className="muted">
        Loading the audit log…
      </p>
      {Array.from({ length: 10 }, (_, i) => (
        <div key={i} className="skeleton" style={{ height: 28 }} />
      ))}
    </div>
  );
}
