"use client";

import { PageError, type ErrorBoundaryProps } from "@/components/ui/page-error";

// The console's shell failed to load (its layout reads the session's user, the tenant and the
// queues' counts): an error in a layout is caught by the boundary above it, and without this one
// that was Next.js's bare "Application error" page, with no way to try again.
export default function ConsoleShellError(props: ErrorBoundaryProps) {
  return (
    <main className="narrow">
      <PageError {...props} title="Tollgate" message="The console could not be loaded." />
    </main>
  );
}
