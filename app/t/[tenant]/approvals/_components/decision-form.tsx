"use client";

import { useRouter } from "next/navigation";
import { useId, useRef, useState, type FormEvent } from "react";
import { problemLine, sendJson } from "../../_components/send-json";
import { useActionNotice } from "@/components/ui/action-notice";

// Approve or reject, with a reason (required to reject). The server decides with a
// compare-and-set: if another approver got there first, the page says this decision was not
// recorded, and shows who decided what.
// seenFlaggedAt: the operation's flag this page shows (its time; null: none), sent with the
// decision, so a yes over a flag raised since the page loaded is refused and the page shows it.
export function DecisionForm({ tenant, approvalId, tool, seenFlaggedAt }: { tenant: string; approvalId: string; tool: string; seenFlaggedAt: string | null }) {
  const router = useRouter();
  const notify = useActionNotice();
  const id = useId();
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [reasonError, setReasonError] = useState<string | null>(null);
  const [busy, setBusy] = useState<"approve" | "reject" | null>(null);

  async function decide(decision: "approve" | "reject", event?: FormEvent) {
    event?.preventDefault();
    setError(null);
    if (decision === "reject" && !reason.trim()) {
      setReasonError("Say why you reject it: the agent's owner will read this.");
      reasonRef.current?.focus();
      return;
    }
    setReasonError(null);
    setBusy(decision);
    const res = await sendJson(`/api/console/${encodeURIComponent(tenant)}/approvals/${encodeURIComponent(approvalId)}/decision`, "POST", {
      decision,
      reason: reason.trim() || undefined,
      seenFlaggedAt,
    });
    setBusy(null);
    if (!res.ok && res.status === 409 && res.code === "invalid-state") {
      // The operation's flag changed since this page loaded: still pending, nothing recorded. The
      // refreshed page shows the flag, and this says why the click did nothing.
      setError(problemLine(res, "Nothing was recorded."));
      router.refresh();
      return;
    }
    if (!res.ok && res.status === 409) {
      // Another approver (or the expiry) got there first. This form disappears with the pending
      // state, so the page itself says that this decision was not recorded, and what was.
      router.replace(`?notRecorded=${decision}`, { scroll: false });
      return;
    }
    // Either way the page shows the approval as it now stands. This form leaves the page with a
    // decision, and focus with it: the page's notice says what was recorded and takes focus.
    if (!res.ok) setError(problemLine(res, "Nothing was recorded."));
    else
      notify?.(
        decision === "approve"
          ? "Approved. The agent's next claim under this key runs the tool with exactly these arguments, once."
          : "Rejected. Every claim under this key now gets 403 approval-rejected.",
      );
    router.refresh();
  }

  return (
    <form className="panel stack decision-form" onSubmit={(e) => decide("approve", e)} noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Your decision</h2>
      <p className="muted small">
        Approving lets the agent&apos;s next claim run <code>{tool}</code> with exactly the arguments above, once. Rejecting answers every claim under this
        key with <code>403 approval-rejected</code>, for good.
      </p>
      <label htmlFor={`${id}-reason`}>
        Reason <span className="muted small">(required to reject)</span>
      </label>
      <textarea
        id={`${id}-reason`}
        ref={reasonRef}
        rows={3}
        value={reason}
        maxLength={2000}
        onChange={(e) => setReason(e.target.value)}
        aria-invalid={reasonError ? true : undefined}
        aria-describedby={reasonError ? `${id}-reason-error` : undefined}
      />
      {reasonError ? (
        <p id={`${id}-reason-error`} className="field-error" role="alert">
          {reasonError}
        </p>
      ) : null}
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="row">
        <button type="submit" className="primary" disabled={busy !== null}>
          {busy === "approve" ? "Approving…" : "Approve"}
        </button>
        <button type="button" className="danger" disabled={busy !== null} onClick={() => decide("reject")}>
          {busy === "reject" ? "Rejecting…" : "Reject"}
        </button>
      </div>
    </form>
  );
}
