"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// A console page failed to load (this boundary covers the overview and any section without its own).
export default function ConsoleError(props: ErrorBoundaryProps) {
  return <PageError {...props} title="Something went wrong" message="This page could not be loaded." />;
}
