"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { Modal } from "../../_components/modal";
import { Field } from "../../_components/field";
import { SecretShownOnce } from "../../_components/secret-shown-once";
import { problemLine, sendJson, type FieldErrors } from "../../_components/send-json";
import { DialogActions } from "@/components/ui/dialog-actions";

type Role = "agent" | "approver" | "admin";
type Created = { key: { id: string; prefix: string; principal: string; role: Role; tools: string[] }; secret: string };

// "Create API key": principal, role and tools; the answer carries the secret, shown here once.
export function CreateKeyButton({ tenant, tools }: { tenant: string; tools: string[] }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        Create API key
      </button>
      {open ? <CreateKeyDialog tenant={tenant} tools={tools} onClose={() => setOpen(false)} /> : null}
    </>
  );
}

function CreateKeyDialog({ tenant, tools, onClose }: { tenant: string; tools: string[]; onClose: () => void }) {
  const router = useRouter();
  const [principal, setPrincipal] = useState("");
  const [role, setRole] = useState<Role>("agent");
  const [chosen, setChosen] = useState<string[]>([]);
  const [fields, setFields] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const res = await sendJson<Created>(`/api/console/${tenant}/api-keys`, "POST", { principal: principal.trim(), role, tools: chosen });
    setBusy(false);
    if (!res.ok) {
      setFields(res.fields);
      setProblem(problemLine(res, "No key was created.", ["principal", "role", "tools"]));
      return;
    }
    setCreated(res.data);
    // The list behind the dialog shows the new key (never its secret) at once.
    router.refresh();
  }

  if (created) {
    return (
      <SecretShownOnce
        title="Copy the secret now"
        warning={
          <>
            <strong>This is the only time the secret is shown.</strong> Tollgate keeps only its SHA-256: if it is lost, revoke the key and create another.
            Store it in your secret manager, not in code or chat.
          </>
        }
        label={`Secret of ${created.key.prefix}… (${created.key.principal}, ${created.key.role})`}
        value={created.secret}
        hint={
          <>
            Agents send it as <code>Authorization: Bearer &lt;secret&gt;</code>.{" "}
            {created.key.tools.length ? `It may use only ${created.key.tools.join(", ")}.` : "It may use every tool of this tenant."}
          </>
        }
        doneLabel="I have stored it"
        onClose={onClose}
      />
    );
  }

  return (
    <Modal title="Create an API key" description="The key acts as its principal: operations are scoped to (principal, tool, Idempotency-Key)." onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate className="stack">
        {problem ? (
          <div className="error" role="alert">
            {problem}
          </div>
        ) : null}
        <Field path="principal" label="Principal" hint="Letters, digits and _ . : @ -, e.g. billing-agent. Several keys may share one (for rotation)." error={fields.principal}>
          {(props) => <input {...props} type="text" autoComplete="off" spellCheck={false} value={principal} onChange={(e) => setPrincipal(e.target.value)} required />}
        </Field>
        <Field path="role" label="Role" error={fields.role}>
          {(props) => (
            <select {...props} value={role} onChange={(e) => setRole(e.target.value as Role)}>
              <option value="agent">agent: claim, heartbeat, complete, read</option>
              <option value="approver">approver: approval decisions, read</option>
              <option value="admin">admin: everything in this tenant</option>
            </select>
          )}
        </Field>
        <fieldset aria-describedby="key-tools-hint">
          <legend>Tools</legend>
          {tools.length === 0 ? <span className="muted small">No tools registered yet.</span> : null}
          <div className="check-grid">
            {tools.map((t) => (
              <label key={t} className="choice">
                <input type="checkbox" checked={chosen.includes(t)} onChange={(e) => setChosen((c) => (e.target.checked ? [...c, t] : c.filter((x) => x !== t)))} />
                <code>{t}</code>
              </label>
            ))}
          </div>
          <span id="key-tools-hint" className="muted small">
            None checked: every tool, including tools registered later.
          </span>
          {fields.tools ? <span className="field-error">{fields.tools}</span> : null}
        </fieldset>
        <DialogActions label="Create key" busyLabel="Creating…" busy={busy} onCancel={onClose} />
      </form>
    </Modal>
  );
}
