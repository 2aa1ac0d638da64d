"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The keys failed to load.
export default function ApiKeysError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="API keys" message="The API keys could not be loaded." />;
}
