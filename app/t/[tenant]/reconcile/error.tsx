"use client";

// The queue failed to load. Nothing was changed.
export default function ReconcileError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="stack" style={{ maxWidth: 560 }}>
      <h1>Reconcile</h1>
      <div className="error" role="alert">
        The queue could not be loaded. Nothing was changed.
        {error.digest ? (
          <>
            {" "}
            Reference <code>{error.digest}</code>.
          </>
        ) : null}
      </div>
      <div className="row">
        <button type="button" className="primary" onClick={reset}>
          Try again
        </button>
      </div>
    </div>
  );
}
