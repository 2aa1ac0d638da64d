"use client";

// The keys failed to load. Nothing was changed.
export default function ApiKeysError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="stack" style={{ maxWidth: 560 }}>
      <h1>API keys</h1>
      <div className="error" role="alert">
        The API keys could not be loaded. Nothing was changed.
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
