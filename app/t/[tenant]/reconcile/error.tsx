"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The queue failed to load.
export default function ReconcileError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Reconcile" message="The queue could not be loaded." />;
}
