"use client";

import type { ReactNode } from "react";

export type ErrorBoundaryProps = { error: Error & { digest?: string }; reset: () => void };

// What a console page shows when it failed to load: reading changed nothing, so "Try again"
// is always safe; the digest lets an operator quote the server log line.
export function PageError({ title, message, error, reset, children }: ErrorBoundaryProps & { title: string; message: string; children?: ReactNode }) {
  return (
    <div className="stack" style={{ maxWidth: 560 }}>
      <h1>{title}</h1>
      <div className="error" role="alert">
        {message} Nothing was changed.
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
        {children}
      </div>
    </div>
  );
}
