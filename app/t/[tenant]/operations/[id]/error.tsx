"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The trace failed to load (the database is unreachable, most likely).
export default function TraceError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Could not load this operation" message="The trace could not be read." />;
}
