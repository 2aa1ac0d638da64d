"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The audit log failed to load.
export default function AuditError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Audit log" message="The audit log could not be loaded." />;
}
