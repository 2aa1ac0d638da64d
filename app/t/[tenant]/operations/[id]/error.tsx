"use client";

// The trace failed to load (the database is unreachable, most likely). Nothing was changed.
export default function TraceError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="stack" style={{ maxWidth: 560 }}>
      <h1>Could not load this operation</h1>
      <div className="error" role="alert">
        The trace could not be read. Nothing was changed.
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
