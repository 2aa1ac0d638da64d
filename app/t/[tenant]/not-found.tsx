"use client";

import { IntentLink } from "@/components/ui/intent-link";
import { useParams } from "next/navigation";
import { EmptyState } from "@/components/ui/empty-state";

// Inside a tenant's console: an unknown approval (or anything else a page could not find),
// shown with the console's navigation instead of Next.js's bare "404" page.
export default function ConsoleNotFound() {
  const params = useParams<{ tenant: string }>();
  return (
    <div className="stack">
      <title>Not found · Tollgate</title>
      <h1>Not found</h1>
      <EmptyState title="Nothing with this address in this tenant">
        It does not exist here, or it was pruned. <IntentLink href={`/t/${params.tenant}`}>Back to the overview</IntentLink>
      </EmptyState>
    </div>
  );
}
