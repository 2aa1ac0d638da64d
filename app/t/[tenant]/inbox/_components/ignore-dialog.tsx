"use client";

import { useRef, useState, type FormEvent } from "react";
import type { InboxEvent } from "@/lib/console/webhook-inbox";
import { Modal } from "../../_components/modal";
import { sendJson } from "../../_components/send-json";
import type { Done } from "./inbox-list";
import { DialogActions } from "@/components/ui/dialog-actions";

// Ignore an inbox event: it needs no action (a test event, a provider's unrelated object). A
// reason is required, here and on the server; the audit log keeps it.
export function IgnoreDialog({ tenant, event, actor, onClose, onDone }: { tenant: string; event: InboxEvent; actor: string; onClose: () => void; onDone: (d: Done) => void }) {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reasonRef = useRef<HTMLTextAreaElement>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!reason.trim()) {
      reasonRef.current?.focus();
      return setError("A reason is required: say why this event needs no action.");
    }
    setBusy(true);
    setError(null);
    const res = await sendJson(`/api/console/${encodeURIComponent(tenant)}/webhook-events/${encodeURIComponent(event.id)}/ignore`, "POST", { reason: reason.trim() });
    setBusy(false);
    if (!res.ok) return setError(`${res.detail.replace(/\.?$/, ".")} Nothing was changed.`);
    onDone({ kind: "ignored", eventId: event.id });
  }

  return (
    <Modal title="Ignore webhook event" onClose={onClose} description={<><code>{event.eventType || "(no type)"}</code> from {event.connectionName} (<code>{event.id}</code>)</>}>
      <form onSubmit={submit} noValidate className="stack">
        <label>
          Reason (required)
          <textarea ref={reasonRef} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} aria-invalid={Boolean(error)} autoFocus placeholder="Why no operation needs this event" />
        </label>
        {error ? (
          <div className="field-error" role="alert">
            {error}
          </div>
        ) : null}
        <DialogActions label="Ignore event" busyLabel="Ignoring…" busy={busy} onCancel={onClose} auditedAs={actor} lockCancel />
      </form>
    </Modal>
  );
}
