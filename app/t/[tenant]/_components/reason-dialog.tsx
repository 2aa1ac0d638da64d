"use client";

import { useRef, useState, type FormEvent, type ReactNode } from "react";
import { useRouter } from "next/navigation";
import { Modal } from "./modal";
import { problemLine, sendJson } from "./send-json";
import { DialogActions } from "@/components/ui/dialog-actions";

// A decision that needs only a reason (ignore an inbox event, clear a flag): the reason is
// required here and on the server, sent with `body` to `url`, and kept by the audit log. A
// refusal is shown in the dialog with "Nothing was changed" (or, when the change may have been
// saved after all, says so and refreshes the page); success calls `onDone`.
export function ReasonDialog({
  title,
  description,
  note,
  placeholder,
  missing,
  url,
  body = {},
  label,
  busyLabel,
  actor,
  onClose,
  onDone,
  onOvertaken,
}: {
  title: string;
  description: ReactNode;
  note?: ReactNode;
  placeholder: string;
  // What the error says when the reason is empty.
  missing: string;
  url: string;
  body?: Record<string, unknown>;
  label: string;
  busyLabel: string;
  actor: string;
  onClose: () => void;
  onDone: () => void;
  // Refused with a 409 (someone else got there first). Given, the caller reports it (its dialog
  // may leave the page with the refresh, as a cleared flag's does); otherwise the dialog says it.
  onOvertaken?: (detail: string) => void;
}) {
  const router = useRouter();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reasonRef = useRef<HTMLTextAreaElement>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!reason.trim()) {
      reasonRef.current?.focus();
      return setError(missing);
    }
    setBusy(true);
    setError(null);
    const res = await sendJson(url, "POST", { ...body, reason: reason.trim() });
    setBusy(false);
    if (!res.ok) {
      const message = problemLine(res, "Nothing was changed.");
      // It may have been saved: the page behind shows what is stored.
      if (res.inDoubt) router.refresh();
      // Overtaken (decided or cleared by someone else): the page behind shows it as it stands now.
      if (res.status === 409) {
        router.refresh();
        if (onOvertaken) return onOvertaken(message);
      }
      return setError(message);
    }
    onDone();
  }

  return (
    <Modal title={title} onClose={onClose} description={description} busy={busy}>
      <form onSubmit={submit} noValidate className="stack">
        {note ? <p className="muted small">{note}</p> : null}
        <label>
          Reason (required)
          <textarea ref={reasonRef} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} aria-invalid={Boolean(error)} data-autofocus placeholder={placeholder} />
        </label>
        {error ? (
          <div className="field-error" role="alert">
            {error}
          </div>
        ) : null}
        <DialogActions label={label} busyLabel={busyLabel} busy={busy} onCancel={onClose} auditedAs={actor} />
      </form>
    </Modal>
  );
}
