"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The approvals list or an approval failed to load.
export default function ApprovalsError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Approvals" message="The approvals could not be loaded." />;
}
