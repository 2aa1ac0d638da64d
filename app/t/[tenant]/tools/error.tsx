"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The registry failed to load.
export default function ToolsError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Tools" message="The tools could not be loaded." />;
}
