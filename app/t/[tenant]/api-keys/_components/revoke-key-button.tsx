"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { Modal } from "../../_components/modal";
import { Field } from "../../_components/field";
import { problemLine, sendJson, type FieldErrors } from "../../_components/send-json";
import { DialogActions } from "@/components/ui/dialog-actions";
import { useActionNotice } from "@/components/ui/action-notice";

// "Revoke" on a key row, behind a confirmation that says what happens and asks why.
export function RevokeKeyButton({ tenant, id, prefix, principal, role }: { tenant: string; id: string; prefix: string; principal: string; role: string }) {
  const router = useRouter();
  const notify = useActionNotice();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [fields, setFields] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const res = await sendJson(`/api/console/${tenant}/api-keys/${encodeURIComponent(id)}/revoke`, "POST", { reason });
    setBusy(false);
    if (!res.ok) {
      setFields(res.fields);
      setProblem(problemLine(res, "The key was not revoked.", ["reason"]));
      return;
    }
    setOpen(false);
    notify?.(`Revoked ${prefix}… (${principal}): requests with it are refused from now on.`);
    router.refresh();
  }

  return (
    <>
      <button type="button" className="danger" onClick={() => setOpen(true)} aria-label={`Revoke ${prefix} (${principal})`}>
        Revoke
      </button>
      {open ? (
        <Modal title={`Revoke ${prefix}…?`} onClose={() => setOpen(false)} busy={busy}>
          <form onSubmit={submit} noValidate className="stack">
            <p>
              The {role} key of <strong>{principal}</strong> stops working at once: every request with it gets <code>401</code>. Operations it started keep
              their history. This cannot be undone.
            </p>
            {problem ? (
              <div className="error" role="alert">
                {problem}
              </div>
            ) : null}
            <Field path="reason" label="Reason (recorded in the audit log)" error={fields.reason}>
              {(props) => <input {...props} type="text" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="e.g. rotated; leaked in a CI log" required />}
            </Field>
            <DialogActions label="Revoke key" busyLabel="Revoking…" busy={busy} onCancel={() => setOpen(false)} danger />
          </form>
        </Modal>
      ) : null}
    </>
  );
}
