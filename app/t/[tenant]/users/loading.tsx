// Shown while the users load.
export default function Loading() {
  return (
    <div className="stack" aria-busy="true">
      <div className="page-head">
        <h1>Users</h1>
      </div>
      <p role="status" className="muted">
        Loading the users…
      </p>
      {Array.from({ length: 5 }, (_, i) => (
        <div key={i} className="skeleton" style={{ height: 28 }} />
      ))}
    </div>
  );
}
