"use client";

// A console page failed to load (this boundary covers the overview and any section without its own).
export default function ConsoleError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="stack" style={{ maxWidth: 560 }}>
      <h1>Something went wrong</h1>
      <div className="error" role="alert">
        This page could not be loaded. Nothing was changed.
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
