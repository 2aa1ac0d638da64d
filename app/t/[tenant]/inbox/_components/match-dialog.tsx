"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import type { InboxEvent } from "@/lib/console/webhook-inbox";
import { Modal } from "../../_components/modal";
import { problemLine, sendJson } from "../../_components/send-json";
import type { Done } from "./inbox-list";
import { DialogActions } from "@/components/ui/dialog-actions";

export type MatchTarget = { event: InboxEvent; operationId: string };

const outcomes = [
  { value: "succeeded", label: "Succeeded", hint: "The effect happened. Retries with the same key get a stored success." },
  { value: "failed", label: "Failed — nothing happened", hint: "No effect. Retries get the failure." },
] as const;

// Match an inbox event to an operation: confirm the outcome the event maps to, or choose one
// when its type maps to none. An unknown or processing operation is settled by it; a settled
// one is only linked, and the server refuses a link that contradicts it.
export function MatchDialog({ tenant, target, actor, onClose, onDone }: { tenant: string; target: MatchTarget; actor: string; onClose: () => void; onDone: (d: Done) => void }) {
  const { event } = target;
  const router = useRouter();
  const [operationId, setOperationId] = useState(target.operationId);
  // What the operator compares with the payload: the chosen candidate's arguments.
  const candidate = event.candidates.find((c) => c.id === operationId.trim());
  const [outcome, setOutcome] = useState<"succeeded" | "failed" | "">(event.outcome ?? "");
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!operationId.trim()) return setError("Enter the operation id.");
    if (!outcome) return setError("Choose what happened.");
    setBusy(true);
    setError(null);
    const res = await sendJson<{ operationId: string; state: string }>(
      `/api/console/${encodeURIComponent(tenant)}/webhook-events/${encodeURIComponent(event.id)}/match`,
      "POST",
      // The status this card showed: decided meanwhile by someone else, the server refuses.
      // And the attempts and the flag the chosen candidate had: one started or raised since, the
      // server refuses (a match may take the flag down). An id typed by hand sends neither.
      {
        operationId: operationId.trim(),
        outcome,
        reason: reason.trim() || undefined,
        eventStatus: event.status === "matched" ? undefined : event.status,
        seenAttempts: candidate?.attempts,
        seenFlaggedAt: candidate ? (candidate.flag?.at ?? null) : undefined,
      },
    );
    setBusy(false);
    if (!res.ok) {
      // Overtaken (decided in another tab, the operation settled), or perhaps saved after all: the
      // page behind shows what is stored now.
      if (res.status === 409 || res.inDoubt) router.refresh();
      return setError(problemLine(res, "Nothing was changed."));
    }
    onDone({ kind: "matched", eventId: event.id, operationId: res.data.operationId, state: res.data.state });
  }

  return (
    <Modal
      title="Match webhook event"
      onClose={onClose}
      busy={busy}
      description={
        <>
          <code>{event.eventType || "(no type)"}</code> from {event.connectionName} (<code>{event.id}</code>)
        </>
      }
    >
      <form onSubmit={submit} noValidate className="stack">
        <label>
          Operation id
          <input value={operationId} onChange={(e) => setOperationId(e.target.value)} className="mono" placeholder="op_…" data-autofocus={target.operationId ? undefined : true} />
        </label>
        {candidate?.argsPreview ? (
          <p className="small">
            Its arguments: <code className="wrap-anywhere">{candidate.argsPreview}</code>
          </p>
        ) : null}
        {candidate?.flag ? (
          <p className="small error" role="note">
            <strong>Flagged:</strong> <span className="wrap-anywhere">{candidate.flag.reason}</span>.{" "}
            {["processing", "unknown", "pending"].includes(candidate.state) ? "Matching settles it and takes this flag down." : "Confirming its outcome takes this flag down only if this event raised it."}
          </p>
        ) : null}
        <fieldset>
          <legend>{event.outcome ? `The connection maps ${event.eventType} to ${event.outcome}: confirm, or correct it` : "What happened? (its type maps to no outcome)"}</legend>
          {outcomes.map((o) => (
            <label key={o.value} className="choice">
              {/* A chosen candidate: focus starts on the outcome to confirm (the event's own, when it maps to one). */}
              <input
                type="radio"
                name="outcome"
                value={o.value}
                checked={outcome === o.value}
                onChange={() => setOutcome(o.value)}
                data-autofocus={target.operationId && (outcome ? outcome === o.value : o.value === "succeeded") ? true : undefined}
              />
              <span>
                <strong>{o.label}</strong> <span className="muted">{o.hint}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <label>
          Note (optional)
          <textarea value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} placeholder="Why this operation: what you compared" />
        </label>
        {error ? (
          <div className="error" role="alert">
            {error}
          </div>
        ) : null}
        <DialogActions label="Match" busyLabel="Matching…" busy={busy} onCancel={onClose} auditedAs={actor} />
      </form>
    </Modal>
  );
}
