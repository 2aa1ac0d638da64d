"use client";

import { useRouter } from "next/navigation";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { resolveRequestSchema } from "@/lib/operations/operation-schemas";
import type { ResolveManyResult } from "@/lib/console/resolve-many";
import { DialogActions } from "@/components/ui/dialog-actions";
import { sendJson } from "@/app/t/[tenant]/_components/send-json";

export type ResolveOutcome =
  | { kind: "single"; operationId: string; state: string }
  | { kind: "bulk"; result: ResolveManyResult; outcome: Outcome };

export type Outcome = "succeeded" | "failed" | "retry";

const choices: { value: Outcome; label: string; hint: string }[] = [
  { value: "succeeded", label: "Succeeded", hint: "The effect happened. Retries with the same key get a stored success." },
  { value: "failed", label: "Failed — nothing happened", hint: "No effect. Retries get the failure; the call is not run again under this key." },
  { value: "retry", label: "Retry allowed", hint: "No effect. The operation goes back to pending and the next claim runs it again." },
];

// The resolve dialog: what happened (succeeded / failed / retry), a required reason, optional
// evidence. One operation or many; the server resolves each with compare-and-set and the same
// rules as the API, so this form only helps — it does not decide.
export function ResolveDialog(props: {
  tenant: string;
  operationIds: string[];
  // Each operation's tool, when the caller knows it: a bulk resolve lists what it settles.
  tools?: Record<string, string>;
  // How many attempts of each operation the person is looking at: if another runs meanwhile,
  // the server refuses the resolve (what they checked was about an earlier attempt).
  attempts?: Record<string, number>;
  // The flag each operation showed (when it was raised), null for none: a resolve takes a flag
  // down, so if one is raised or cleared meanwhile the server refuses it too.
  flags?: Record<string, string | null>;
  open: boolean;
  actor: string;
  onClose: () => void;
  onResolved: (outcome: ResolveOutcome) => void;
}) {
  const { tenant, operationIds, open, onClose, onResolved } = props;
  const ref = useRef<HTMLDialogElement>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const id = useId();
  const [outcome, setOutcome] = useState<Outcome | "">("");
  const [reason, setReason] = useState("");
  const [resourceId, setResourceId] = useState("");
  const [evidence, setEvidence] = useState("");
  const [errors, setErrors] = useState<{ outcome?: string; reason?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);
  // Someone else settled the operation while this form was open: the page behind is out of date.
  const [overtaken, setOvertaken] = useState(false);
  const router = useRouter();
  const bulk = operationIds.length > 1;
  // Which submit the form is waiting for: an answer to an earlier one (the form was closed, and
  // perhaps opened for another operation, while it was on its way) must not land in this form.
  const submission = useRef(0);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    else if (!open && dialog.open) dialog.close();
  }, [open]);

  // Every way out (Cancel, Esc, success) starts the next opening from an empty form.
  function close() {
    submission.current++;
    setBusy(false);
    setOutcome("");
    setReason("");
    setResourceId("");
    setEvidence("");
    setErrors({});
    if (overtaken) {
      setOvertaken(false);
      router.refresh();
    }
    onClose();
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const body = {
      outcome,
      reason,
      resourceId: outcome === "succeeded" && resourceId.trim() && !bulk ? resourceId.trim() : undefined,
      evidence: evidence.trim() || undefined,
    };
    const parsed = resolveRequestSchema.safeParse(body);
    if (!outcome || !parsed.success) {
      const issues = parsed.success ? [] : parsed.error.issues;
      const reasonMissing = issues.some((i) => i.path[0] === "reason");
      // Put the person where the problem is, rather than leaving focus on the button.
      if (outcome && reasonMissing) reasonRef.current?.focus();
      setErrors({
        outcome: outcome ? undefined : "Choose what happened.",
        reason: reasonMissing ? "A reason is required: say what you checked." : undefined,
        form: issues.find((i) => i.path[0] !== "reason" && i.path[0] !== "outcome")?.message,
      });
      return;
    }
    setBusy(true);
    setErrors({});
    const mine = ++submission.current;
    try {
      const single = operationIds[0] as string;
      const url = bulk
        ? `/api/console/${encodeURIComponent(tenant)}/operations/resolve-bulk`
        : `/api/console/${encodeURIComponent(tenant)}/operations/${encodeURIComponent(single)}/resolve`;
      const res = await sendJson<Record<string, unknown>>(
        url,
        "POST",
        bulk
          ? { ...parsed.data, operationIds, seenAttempts: seenOf(operationIds, props.attempts), seenFlags: seenOf(operationIds, props.flags) }
          : { ...parsed.data, seenAttempts: props.attempts?.[single], seenFlaggedAt: props.flags?.[single] },
      );
      // Closed meanwhile: whatever it did, the page behind shows what is stored now.
      if (mine !== submission.current) return router.refresh();
      if (!res.ok) {
        // The form stays open with the server's account of who settled it (the page would
        // otherwise refresh this form away); closing it shows the operation as it now stands.
        // No answer at all (status 0): the request may have reached the server before the
        // connection failed, or while it waited.
        if (res.status === 409 || res.inDoubt) setOvertaken(true);
        setErrors({
          form:
            res.status === 409
              ? `${res.detail} Nothing was recorded from this form; close it to see the operation as it stands.`
              : res.status === 0
                ? `${res.detail} The resolution may or may not have been recorded. Close this form to see the operation as it stands.`
                : res.inDoubt
                  ? `${res.detail.replace(/\.?$/, ".")} It may or may not have been recorded: close this form to see the operation as it stands before trying again.`
                  : res.detail,
        });
        return;
      }
      onResolved(
        bulk
          ? { kind: "bulk", result: res.data as unknown as ResolveManyResult, outcome: parsed.data.outcome }
          : { kind: "single", operationId: single, state: String(res.data.state) },
      );
      close();
    } finally {
      if (mine === submission.current) setBusy(false);
    }
  }

  const title = bulk ? `Resolve ${operationIds.length} operations` : "Resolve operation";
  const distinctTools = [...new Set(operationIds.flatMap((opId) => (props.tools?.[opId] ? [props.tools[opId]] : [])))];
  return (
    <dialog
      ref={ref}
      className="resolve-dialog"
      aria-labelledby={`${id}-title`}
      // Esc while the resolve is on its way keeps the form: its answer says what was recorded.
      onCancel={(e) => busy && e.preventDefault()}
      onClose={close}
    >
      <form onSubmit={submit} noValidate className="stack">
        <div>
          <h2 id={`${id}-title`}>{title}</h2>
          {bulk ? (
            <>
              <p className="muted">
                One outcome and one reason for all {operationIds.length}. Each is resolved on its own: one that somebody settled meanwhile is
                skipped and reported, never overwritten.
              </p>
              <ul className="compact-list resolve-dialog-ids" aria-label="Operations to resolve">
                {operationIds.map((opId) => (
                  <li key={opId}>
                    <code>{opId}</code>
                    {props.tools?.[opId] ? <> · {props.tools[opId]}</> : null}
                  </li>
                ))}
              </ul>
              {distinctTools.length > 1 ? (
                <p className="warn-text" role="note">
                  They are calls of {distinctTools.length} different tools ({distinctTools.join(", ")}): the outcome and the reason must be true for
                  every one.
                </p>
              ) : null}
            </>
          ) : (
            <p className="muted">
              <code>{operationIds[0]}</code>: nobody knows whether this call took effect. Check the provider first, then record what
              happened.
            </p>
          )}
        </div>
        <fieldset aria-describedby={errors.outcome ? `${id}-outcome-error` : undefined} aria-invalid={Boolean(errors.outcome)}>
          <legend>What happened?</legend>
          {choices.map((c) => (
            <label key={c.value} className="choice">
              <input type="radio" name="outcome" value={c.value} checked={outcome === c.value} onChange={() => setOutcome(c.value)} />
              <span>
                <strong>{c.label}</strong>
                <span className="muted">{c.hint}</span>
              </span>
            </label>
          ))}
          {errors.outcome ? (
            <p id={`${id}-outcome-error`} className="field-error">
              {errors.outcome}
            </p>
          ) : null}
        </fieldset>
        {outcome === "succeeded" && !bulk ? (
          <label>
            Resource id (optional)
            <input value={resourceId} onChange={(e) => setResourceId(e.target.value)} maxLength={500} placeholder="e.g. the provider's ticket or charge id" />
          </label>
        ) : null}
        <label>
          Reason (required)
          <textarea
            ref={reasonRef}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={2000}
            required
            aria-invalid={Boolean(errors.reason)}
            aria-describedby={errors.reason ? `${id}-reason-error` : undefined}
            placeholder="Why this outcome: what you checked and where (agents can read it in the status view)"
          />
        </label>
        {errors.reason ? (
          <span id={`${id}-reason-error`} className="field-error">
            {errors.reason}
          </span>
        ) : null}
        <label>
          Evidence note (optional)
          <textarea value={evidence} onChange={(e) => setEvidence(e.target.value)} maxLength={4000} placeholder="What you saw: a dashboard link, a log line, a provider request id" />
        </label>
        {errors.form ? (
          <div className="error" role="alert">
            {errors.form}
          </div>
        ) : null}
        <DialogActions label={bulk ? `Resolve ${operationIds.length}` : "Resolve"} busyLabel="Resolving…" busy={busy} onCancel={close} auditedAs={props.actor} />
      </form>
    </dialog>
  );
}

// The attempts the person saw of the operations they resolve (not of every row on the page).
function seenOf<T>(operationIds: string[], seen: Record<string, T> | undefined): Record<string, T> | undefined {
  if (!seen) return undefined;
  return Object.fromEntries(operationIds.flatMap((opId) => (seen[opId] === undefined ? [] : [[opId, seen[opId]]])));
}
