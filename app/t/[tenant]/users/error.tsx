"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The users failed to load.
export default function UsersError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Users" message="The users could not be loaded." />;
}
