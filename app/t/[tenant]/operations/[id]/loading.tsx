// Shown while the trace loads: the page's shape, so nothing jumps when it arrives.
export default function Loading() {
  return (
    <div className="trace-page" aria-busy="true">
      <p role="status" className="muted">
        Loading the trace…
      </p>
      <div className="skeleton" style={{ width: 320, height: 24 }} />
      <div className="skeleton" style={{ width: "100%", height: 64 }} />
      <div className="trace-grid">
        <div className="skeleton" style={{ height: 360 }} />
        <div className="skeleton" style={{ height: 240 }} />
      </div>
    </div>
  );
}
