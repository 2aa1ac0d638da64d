// Shown while the tool registry loads.
export default function Loading() {
  return (
    <div className="stack" aria-busy="true">
      <div className="page-head">
        <h1>Tools</h1>
      </div>
      <p role="status" className="muted">
        Loading the tools…
      </p>
      {Array.from({ length: 4 }, (_, i) => (
        <div key={i} className="skeleton" style={{ height: 40 }} />
      ))}
    </div>
  );
}
