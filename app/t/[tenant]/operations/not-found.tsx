"use client";

import { IntentLink } from "@/components/ui/intent-link";
import { useParams } from "next/navigation";
import { EmptyState } from "@/components/ui/empty-state";

// An unknown operation id, or one of another tenant (which, from here, does not exist).
export default function OperationNotFound() {
  const params = useParams<{ tenant: string; id: string }>();
  const id = safeDecode(params.id ?? "");
  return (
    <div className="stack">
      <h1>Operation not found</h1>
      <EmptyState title="No such operation in this tenant">
        <code>{id}</code> does not exist here, or it was pruned after its result expired.{" "}
        <IntentLink href={`/t/${params.tenant}/operations`}>Back to operations</IntentLink>
      </EmptyState>
    </div>
  );
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
