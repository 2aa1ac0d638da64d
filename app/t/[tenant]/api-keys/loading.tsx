// Shown while the keys load.
export default function Loading() {
  return (
    <div className="stack" aria-busy="true">
      <div className="page-head">
        <h1>API keys</h1>
      </div>
      <p role="status" className="muted">
        Loading the API keys…
      </p>
      {Array.from({ length: 6 }, (_, i) => (
        <div key={i} className="skeleton" style={{ height: 28 }} />
      ))}
    </div>
  );
}
