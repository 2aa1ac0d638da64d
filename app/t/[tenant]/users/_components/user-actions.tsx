"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { useActionNotice } from "@/components/ui/action-notice";
import { userRoles, type UserRole } from "@/lib/auth/roles";
import { Modal } from "../../_components/modal";
import { Field } from "../../_components/field";
import { problemLine, sendJson, type FieldErrors } from "../../_components/send-json";
import { DialogActions } from "@/components/ui/dialog-actions";

type Target = { id: string; email: string; role: UserRole; disabled: boolean };
type Change = { kind: "role"; role: UserRole } | { kind: "disabled"; disabled: boolean };

// A row's "Change role" and "Disable"/"Enable", each confirmed with a reason for the audit log.
export function UserActions({ tenant, user }: { tenant: string; user: Target }) {
  const [change, setChange] = useState<Change | null>(null);
  return (
    <span className="row">
      <label className="inline-label">
        <span className="visually-hidden">Role of {user.email}</span>
        <select value={user.role} onChange={(e) => setChange({ kind: "role", role: e.target.value as UserRole })} disabled={user.disabled}>
          {userRoles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <button type="button" className={user.disabled ? undefined : "danger"} onClick={() => setChange({ kind: "disabled", disabled: !user.disabled })} aria-label={`${user.disabled ? "Enable" : "Disable"} ${user.email}`}>
        {user.disabled ? "Enable" : "Disable"}
      </button>
      {change ? <ConfirmChange tenant={tenant} user={user} change={change} onClose={() => setChange(null)} /> : null}
    </span>
  );
}

function ConfirmChange({ tenant, user, change, onClose }: { tenant: string; user: Target; change: Change; onClose: () => void }) {
  const router = useRouter();
  const notify = useActionNotice();
  const [reason, setReason] = useState("");
  const [fields, setFields] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const title =
    change.kind === "role" ? `Make ${user.email} ${withArticle(change.role)}?` : `${change.disabled ? "Disable" : "Enable"} ${user.email}?`;
  const effect =
    change.kind === "role"
      ? `From ${user.role} to ${change.role}, in every tenant they belong to, from their next click.`
      : change.disabled
        ? "They are signed out on their next request and cannot sign in. Their audit history stays."
        : "They can sign in again with their existing password or SSO.";

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const body = change.kind === "role" ? { role: change.role, reason: reason || undefined } : { disabled: change.disabled, reason: reason || undefined };
    const res = await sendJson(`/api/console/${tenant}/users/${encodeURIComponent(user.id)}`, "PATCH", body);
    setBusy(false);
    if (!res.ok) {
      setFields(res.fields);
      setProblem(problemLine(res, "Nothing was changed.", ["reason"]));
      return;
    }
    onClose();
    notify?.(change.kind === "role" ? `${user.email} is now ${withArticle(change.role)}.` : `${user.email} is ${change.disabled ? "disabled" : "enabled"}.`);
    router.refresh();
  }

  return (
    <Modal title={title} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate className="stack">
        <p>{effect}</p>
        {problem ? (
          <div className="error" role="alert">
            {problem}
          </div>
        ) : null}
        <Field path="reason" label="Reason (recorded in the audit log)" error={fields.reason}>
          {(props) => <input {...props} type="text" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="e.g. joined the on-call rotation" />}
        </Field>
        <DialogActions
          label={change.kind === "role" ? "Change role" : change.disabled ? "Disable user" : "Enable user"}
          busyLabel="Saving…"
          busy={busy}
          onCancel={onClose}
          danger={change.kind === "disabled" && change.disabled}
        />
      </form>
    </Modal>
  );
}

// "an admin", "a viewer".
function withArticle(role: string): string {
  return `${/^[aeiou]/.test(role) ? "an" : "a"} ${role}`;
}
