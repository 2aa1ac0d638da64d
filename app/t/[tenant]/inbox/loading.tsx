// Shown while the inbox loads.
export default function Loading() {
  return (
    <div className="stack" aria-busy="true">
      <div className="page-head">
        <h1>Inbox</h1>
      </div>
      <p role="status" className="muted">
        Loading webhook events…
      </p>
      {Array.from({ length: 4 }, (_, i) => (
        <div key={i} className="skeleton" style={{ height: 96 }} />
      ))}
    </div>
  );
}
