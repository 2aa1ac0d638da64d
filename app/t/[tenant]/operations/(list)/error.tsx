"use client";

import { IntentLink } from "@/components/ui/intent-link";
import { useParams } from "next/navigation";
import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The operations list failed to load (the database is unreachable or timed out, most likely).
// A plain link drops filters that might be what the database choked on.
export default function OperationsError(props: ErrorBoundaryProps) {
  const params = useParams<{ tenant: string }>();
  return (
    <PageError {...props} title="Could not load operations" message="The list could not be read from the database.">
      <IntentLink className="button" href={`/t/${params.tenant}/operations`}>
        Operations without filters
      </IntentLink>
    </PageError>
  );
}
