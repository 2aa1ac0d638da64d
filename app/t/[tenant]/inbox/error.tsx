"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The inbox failed to load.
export default function InboxError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Inbox" message="The inbox could not be loaded." />;
}
