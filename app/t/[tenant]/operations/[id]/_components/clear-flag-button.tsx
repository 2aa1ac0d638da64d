"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { useActionNotice } from "@/components/ui/action-notice";
import { ReasonDialog } from "../../../_components/reason-dialog";

// "Clear flag…": an operator who checked the provider takes the flag down, with a reason the
// audit log and the trace keep. The recorded outcome is not changed (that is a resolve). The
// flag read here is sent back, so one raised again meanwhile is not cleared unseen. The flag's
// notice (and this button) leave the page with the refresh: what was done is said in the
// page's action notice, which keeps focus.
export function ClearFlagButton({
  tenant,
  operationId,
  flaggedAt,
  flagReason,
  actor,
  resolvable,
}: {
  tenant: string;
  operationId: string;
  flaggedAt: string;
  flagReason: string | null;
  actor: string;
  // Whether a resolve could still change the outcome (unknown, or a lease that expired): a settled
  // one cannot be, and the dialog said "resolve the operation instead" to a person who could not.
  resolvable: boolean;
}) {
  const router = useRouter();
  const notify = useActionNotice();
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)} aria-haspopup="dialog">
        Clear flag…
      </button>
      {open ? (
        <ReasonDialog
          title="Clear the flag"
          description={<>The flag says: {flagReason ?? "the evidence disagrees with the recorded outcome"}.</>}
          note={
            resolvable
              ? "The recorded outcome stays as it is; to change it, resolve the operation instead."
              : "The recorded outcome stays as it is: a settled outcome is not changed here. If it is wrong, put it right at the provider (a refund, a cancellation) and say so in the reason."
          }
          placeholder="What you checked: the provider's dashboard, a log line, who you asked"
          missing="A reason is required: say what you checked."
          url={`/api/console/${encodeURIComponent(tenant)}/operations/${encodeURIComponent(operationId)}/clear-flag`}
          body={{ flaggedAt }}
          label="Clear flag"
          busyLabel="Clearing…"
          actor={actor}
          onClose={() => setOpen(false)}
          onOvertaken={(message) => {
            // The refresh takes the flag's notice, this button and its dialog away: the page's notice says it.
            setOpen(false);
            notify?.(message);
          }}
          onDone={() => {
            setOpen(false);
            notify?.("Flag cleared. The timeline shows it with your reason; the recorded outcome is unchanged.");
            router.refresh();
          }}
        />
      ) : null}
    </>
  );
}
