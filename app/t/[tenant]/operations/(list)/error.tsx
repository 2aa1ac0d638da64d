"use client";

import Link from "next/link";
import { useParams } from "next/navigation";

// The operations list failed to load (the database is unreachable or timed out, most likely).
// Reading changes nothing, so trying again is always safe; a plain link drops odd filters.
export default function OperationsError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  const params = useParams<{ tenant: string }>();
  return (
    <div className="stack" style={{ maxWidth: 620 }}>
      <h1>Could not load operations</h1>
      <div className="error" role="alert">
        The list could not be read from the database. Nothing was changed.
        {error.digest ? (
          <>
            {" "}
            Reference <code>{error.digest}</code> (it is in the server log).
          </>
        ) : null}
      </div>
      <div className="row">
        <button type="button" className="primary" onClick={reset}>
          Try again
        </button>
        <Link className="button" href={`/t/${params.tenant}/operations`}>
          Operations without filters
        </Link>
      </div>
    </div>
  );
}
