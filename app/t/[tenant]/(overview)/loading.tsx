// Shown while the overview's numbers load.
export default function Loading() {
  return (
    <div className="stack" aria-busy="true">
      <div className="page-head">
        <h1>Overview</h1>
      </div>
      <p role="status" className="muted">
        Loading the overview…
      </p>
      <div className="cards">
        {Array.from({ length: 8 }, (_, i) => (
          <div key={i} className="skeleton" style={{ height: 70 }} />
        ))}
      </div>
      <div className="panels">
        <div className="skeleton" style={{ height: 170 }} />
        <div className="skeleton" style={{ height: 170 }} />
      </div>
    </div>
  );
}
