"use client";

import { useRef, useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { Modal } from "../../../_components/modal";
import { sendJson } from "../../../_components/send-json";
import { DialogActions } from "@/components/ui/dialog-actions";

// "Clear flag…": an operator who checked the provider takes the flag down, with a reason the
// audit log and the trace keep. The recorded outcome is not changed (that is a resolve). The
// flag read here is sent back, so one raised again meanwhile is not cleared unseen.
export function ClearFlagButton({ tenant, operationId, flaggedAt, flagReason, actor }: { tenant: string; operationId: string; flaggedAt: string; flagReason: string | null; actor: string }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState("");
  const reasonRef = useRef<HTMLTextAreaElement>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!reason.trim()) {
      reasonRef.current?.focus();
      return setError("A reason is required: say what you checked.");
    }
    setBusy(true);
    setError(null);
    const res = await sendJson(`/api/console/${encodeURIComponent(tenant)}/operations/${encodeURIComponent(operationId)}/clear-flag`, "POST", {
      flaggedAt,
      reason: reason.trim(),
    });
    setBusy(false);
    if (!res.ok) return setError(`${res.detail.replace(/\.?$/, ".")} Nothing was changed.`);
    setOpen(false);
    setStatus("Flag cleared.");
    router.refresh();
  }

  return (
    <>
      <button type="button" onClick={() => setOpen(true)} aria-haspopup="dialog">
        Clear flag…
      </button>
      <span role="status" className="visually-hidden">
        {status}
      </span>
      {open ? (
        <Modal title="Clear the flag" onClose={() => setOpen(false)} description={<>The flag says: {flagReason ?? "the evidence disagrees with the recorded outcome"}.</>}>
          <form onSubmit={submit} noValidate className="stack">
            <p className="muted small">The recorded outcome stays as it is; to change it, resolve the operation instead.</p>
            <label>
              Reason (required)
              <textarea
                ref={reasonRef}
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                maxLength={2000}
                aria-invalid={Boolean(error)}
                autoFocus
                placeholder="What you checked: the provider's dashboard, a log line, who you asked"
              />
            </label>
            {error ? (
              <div className="field-error" role="alert">
                {error}
              </div>
            ) : null}
            <DialogActions label="Clear flag" busyLabel="Clearing…" busy={busy} onCancel={() => setOpen(false)} auditedAs={actor} lockCancel />
          </form>
        </Modal>
      ) : null}
    </>
  );
}
