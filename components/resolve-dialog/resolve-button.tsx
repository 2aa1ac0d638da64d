"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { ResolveDialog } from "@/components/resolve-dialog/resolve-dialog";
import { useActionNotice } from "@/components/ui/action-notice";

const settled: Record<string, string> = { succeeded: "succeeded", failed: "failed", pending: "retry allowed (pending)" };

// "Resolve…" for one operation: opens the dialog, then refreshes the page so the new state,
// the resolution and its audit event show at once. Render it only for users who may resolve.
// A resolved operation has no Resolve button: under an ActionNoticeProvider the page's notice
// says what was done and takes focus; without one, a status line here does.
export function ResolveButton({ tenant, operationId, attempts, flaggedAt, actor, label = "Resolve…", className = "primary" }: {
  tenant: string;
  operationId: string;
  // The attempts and the flag (its time, null for none) the page shows (see ResolveDialog).
  attempts?: number;
  flaggedAt?: string | null;
  actor: string;
  label?: string;
  className?: string;
}) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [status, setStatus] = useState("");
  const notify = useActionNotice();
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)} aria-haspopup="dialog">
        {label}
      </button>
      <span role="status" className="visually-hidden">
        {status}
      </span>
      <ResolveDialog
        tenant={tenant}
        operationIds={[operationId]}
        attempts={attempts === undefined ? undefined : { [operationId]: attempts }}
        flags={flaggedAt === undefined ? undefined : { [operationId]: flaggedAt }}
        open={open}
        actor={actor}
        onClose={() => setOpen(false)}
        onResolved={(outcome) => {
          if (outcome.kind === "single") {
            const text = `Resolved: ${settled[outcome.state] ?? outcome.state}.`;
            if (notify) notify(`${text} The timeline shows who resolved it and why.`);
            else setStatus(text);
          }
          router.refresh();
        }}
      />
    </>
  );
}
