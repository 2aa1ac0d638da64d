"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import type { UserRole } from "@/lib/auth/roles";
import { Modal } from "../../_components/modal";
import { DialogActions } from "@/components/ui/dialog-actions";
import { Field } from "../../_components/field";
import { SecretShownOnce } from "../../_components/secret-shown-once";
import { problemLine, sendJson, type FieldErrors } from "../../_components/send-json";

type Created = { user: { id: string; email: string; role: UserRole }; generatedPassword: string | null };

// "Add user": a member of this tenant with a role; a password typed here, or one generated and shown once.
export function CreateUserButton({ tenant }: { tenant: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        Add user
      </button>
      {open ? <CreateUserDialog tenant={tenant} onClose={() => setOpen(false)} /> : null}
    </>
  );
}

function CreateUserDialog({ tenant, onClose }: { tenant: string; onClose: () => void }) {
  const router = useRouter();
  const [form, setForm] = useState({ email: "", name: "", role: "viewer" as UserRole, password: "" });
  const [fields, setFields] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const set = (key: keyof typeof form, value: string) => setForm((f) => ({ ...f, [key]: value }));

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const res = await sendJson<Created>(`/api/console/${tenant}/users`, "POST", { ...form, email: form.email.trim() });
    setBusy(false);
    if (!res.ok) {
      setFields(res.fields);
      setProblem(problemLine(res, "No user was added.", ["email", "name", "role", "password"]));
      return;
    }
    router.refresh();
    if (res.data.generatedPassword) setCreated(res.data);
    else onClose();
  }

  if (created?.generatedPassword) {
    return (
      <SecretShownOnce
        title={`${created.user.email} was added`}
        warning={
          <>
            <strong>The generated password is shown only now.</strong> Give it to {created.user.email} over a private channel; only its scrypt hash is
            stored.
          </>
        }
        label="Password"
        value={created.generatedPassword}
        doneLabel="Done"
        onClose={onClose}
      />
    );
  }

  return (
    <Modal title="Add a user to this tenant" onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate className="stack">
        {problem ? (
          <div className="error" role="alert">
            {problem}
          </div>
        ) : null}
        <Field path="email" label="Email" error={fields.email}>
          {(props) => <input {...props} type="email" autoComplete="off" value={form.email} onChange={(e) => set("email", e.target.value)} required />}
        </Field>
        <Field path="name" label="Name (optional)" error={fields.name}>
          {(props) => <input {...props} type="text" autoComplete="off" value={form.name} onChange={(e) => set("name", e.target.value)} />}
        </Field>
        <Field path="role" label="Role" error={fields.role}>
          {(props) => (
            <select {...props} value={form.role} onChange={(e) => set("role", e.target.value)}>
              <option value="viewer">viewer: reads everything</option>
              <option value="operator">operator: also resolves unknown outcomes</option>
              <option value="approver">approver: also decides approvals</option>
              <option value="admin">admin: also tools, API keys and users</option>
            </select>
          )}
        </Field>
        <Field path="password" label="Password (optional)" hint="At least 12 characters. Leave empty to generate one, shown once." error={fields.password}>
          {(props) => <input {...props} type="password" autoComplete="new-password" value={form.password} onChange={(e) => set("password", e.target.value)} />}
        </Field>
        <DialogActions label="Add user" busyLabel="Adding…" busy={busy} onCancel={onClose} />
      </form>
    </Modal>
  );
}
