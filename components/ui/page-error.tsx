"use client";

import { useEffect, useState, type ReactNode } from "react";

// Next.js passes `retry` (a router refresh and a reset, in one transition) besides `reset`.
// Only `retry` loads the page's data again: `reset` alone re-renders what already failed, so a
// page whose server render failed (the database was away) would fail again without asking.
export type ErrorBoundaryProps = { error: Error & { digest?: string }; reset: () => void; retry?: () => void };

// What a console page shows when it failed to load: reading changed nothing, so "Try again"
// is always safe; the digest lets an operator quote the server log line. Production builds hide
// a server error's message, so the page asks the readiness check whether the database is the
// cause: "try again in a moment" is then the whole advice, and nobody needs the log.
export function PageError({ title, message, error, reset, retry, children }: ErrorBoundaryProps & { title: string; message: string; children?: ReactNode }) {
  const databaseDown = useDatabaseDown();
  return (
    <div className="stack" style={{ maxWidth: 560 }}>
      <h1>{title}</h1>
      <div className="error" role="alert">
        {databaseDown ? DATABASE_DOWN : message} Nothing was changed.
        {error.digest ? (
          <>
            {" "}
            Reference <code>{error.digest}</code>.
          </>
        ) : null}
      </div>
      <div className="row">
        <button type="button" className="primary" onClick={retry ?? reset}>
          Try again
        </button>
        {children}
      </div>
    </div>
  );
}

const DATABASE_DOWN = "Tollgate cannot reach its database right now, so this page could not be loaded. Try again in a moment.";

// Asks /api/health once, when the error shows: 503 means the database does not answer.
function useDatabaseDown(): boolean {
  const [down, setDown] = useState(false);
  useEffect(() => {
    const controller = new AbortController();
    fetch("/api/health", { cache: "no-store", signal: controller.signal })
      .then((res) => setDown(res.status === 503))
      // The server itself out of reach is not what this line is about: keep the page's own text.
      .catch(() => undefined);
    return () => controller.abort();
  }, []);
  return down;
}
