"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import type { ToolView } from "@/lib/tools/tool-view";
import { Modal } from "../../_components/modal";
import { sendJson, type FieldErrors } from "../../_components/send-json";
import { Field } from "../../_components/field";
import { DialogActions } from "@/components/ui/dialog-actions";

type Draft = {
  description: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
  leaseSeconds: string;
  maxAttempts: string;
  baseMs: string;
  capMs: string;
  takeover: "never" | "deduplicated";
  approval: "none" | "required";
  approvalTtlSeconds: string;
  resultRetentionHours: string;
  reason: string;
};

function draftOf(t: ToolView): Draft {
  return {
    description: t.description,
    ...t.annotations,
    leaseSeconds: String(t.policy.leaseSeconds),
    maxAttempts: String(t.policy.maxAttempts),
    baseMs: String(t.policy.backoff.baseMs),
    capMs: String(t.policy.backoff.capMs),
    takeover: t.policy.takeover,
    approval: t.policy.approval,
    approvalTtlSeconds: String(t.policy.approvalTtlSeconds),
    resultRetentionHours: String(t.policy.resultRetentionHours),
    reason: "",
  };
}

// An empty or non-numeric field is sent as null, so the server's schema names that field.
const num = (v: string) => (v.trim() === "" || !Number.isFinite(Number(v)) ? null : Number(v));

// "Edit policy" on a tool row: a form whose values are checked by the server with the API's
// own schema; each problem is shown at its field.
export function EditToolButton({ tenant, tool }: { tenant: string; tool: ToolView }) {
  const [open, setOpen] = useState(false);
  const [saved, setSaved] = useState(false);
  return (
    <span className="row">
      <button
        type="button"
        onClick={() => {
          setSaved(false);
          setOpen(true);
        }}
        aria-label={`Edit ${tool.name}`}
      >
        Edit
      </button>
      <span role="status" className="small ok-text">
        {saved ? "Saved" : ""}
      </span>
      {open ? (
        <ToolForm
          tenant={tenant}
          tool={tool}
          onClose={() => setOpen(false)}
          onSaved={() => {
            setOpen(false);
            setSaved(true);
          }}
        />
      ) : null}
    </span>
  );
}

function ToolForm({ tenant, tool, onClose, onSaved }: { tenant: string; tool: ToolView; onClose: () => void; onSaved: () => void }) {
  const router = useRouter();
  const [draft, setDraft] = useState(() => draftOf(tool));
  // The tool as the form opened on it: the save says which version it edits, so one made since
  // (another admin's approval gate, say) is refused rather than silently undone.
  const [basis] = useState(tool);
  const [fields, setFields] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const definition = {
      description: draft.description,
      annotations: { readOnlyHint: draft.readOnlyHint, destructiveHint: draft.destructiveHint, idempotentHint: draft.idempotentHint, openWorldHint: draft.openWorldHint },
      policy: {
        leaseSeconds: num(draft.leaseSeconds),
        maxAttempts: num(draft.maxAttempts),
        backoff: { baseMs: num(draft.baseMs), capMs: num(draft.capMs) },
        takeover: draft.takeover,
        approval: draft.approval,
        approvalTtlSeconds: num(draft.approvalTtlSeconds),
        resultRetentionHours: num(draft.resultRetentionHours),
        // Not edited here (the API sets it); carried through so saving the form keeps it.
        probe: basis.policy.probe ?? null,
      },
    };
    const res = await sendJson<ToolView>(`/api/console/${tenant}/tools/${encodeURIComponent(tool.name)}`, "PUT", { definition, reason: draft.reason || undefined, seenUpdatedAt: basis.updatedAt });
    setBusy(false);
    if (res.ok) {
      router.refresh();
      onSaved();
      return;
    }
    // Changed since the form opened: the table behind it shows the tool as it is now.
    if (res.status === 409) router.refresh();
    // Paths of the definition schema ("policy.leaseSeconds"), or "definition…" / "reason" from the body schema.
    const byField: FieldErrors = {};
    for (const [raw, message] of Object.entries(res.fields)) {
      const path = raw.replace(/^definition\./, "");
      // An emptied number field reaches the schema as null: say what the person did, not what zod saw.
      byField[path] = /received null/.test(message) ? "Required: enter a whole number" : message;
    }
    setFields(byField);
    const shown = Object.keys(byField).filter((p) => knownPaths.has(p)).length;
    setProblem(shown ? `${shown === 1 ? "One field needs" : `${shown} fields need`} a change. Nothing was saved.` : `${res.detail} Nothing was saved.`);
  }

  const numberField = (key: "leaseSeconds" | "maxAttempts" | "baseMs" | "capMs" | "approvalTtlSeconds" | "resultRetentionHours", path: string, label: string, hint: string) => (
    <Field path={path} label={label} hint={hint} error={fields[path]}>
      {(props) => <input {...props} type="number" inputMode="numeric" step={1} value={draft[key]} onChange={(e) => set(key, e.target.value)} />}
    </Field>
  );

  return (
    <Modal title={`Edit ${tool.name}`} description="Applies to claims and attempts from now on; operations already claimed keep the attempts they were given." onClose={onClose} wide busy={busy}>
      <form onSubmit={submit} noValidate className="stack tool-form">
        {problem ? (
          <div className="error" role="alert">
            {problem}
          </div>
        ) : null}
        <Field path="description" label="Description" error={fields.description}>
          {(props) => <textarea {...props} rows={2} value={draft.description} onChange={(e) => set("description", e.target.value)} />}
        </Field>
        <fieldset>
          <legend>Annotations (MCP hints; they inform people and agents, Tollgate does not enforce them)</legend>
          <div className="check-grid">
            {(
              [
                ["readOnlyHint", "Read-only", "changes nothing outside"],
                ["destructiveHint", "Destructive", "may destroy or overwrite data"],
                ["idempotentHint", "Idempotent", "a repeat has no further effect"],
                ["openWorldHint", "Open-world", "talks to outside systems"],
              ] as const
            ).map(([key, label, help]) => (
              <label key={key} className="choice">
                <input type="checkbox" checked={draft[key]} onChange={(e) => set(key, e.target.checked)} />
                <span>
                  {label} <span className="muted">{help}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Policy</legend>
          <div className="form-grid">
            {numberField("leaseSeconds", "policy.leaseSeconds", "Lease (seconds)", "1–3600; a heartbeat extends it")}
            {numberField("maxAttempts", "policy.maxAttempts", "Max attempts", "1–20")}
            {numberField("baseMs", "policy.backoff.baseMs", "Backoff base (ms)", "1–3 600 000")}
            {numberField("capMs", "policy.backoff.capMs", "Backoff cap (ms)", "at least the base; up to 86 400 000")}
            <Field
              path="policy.takeover"
              label="Takeover after an expired lease"
              hint={draft.takeover === "never" ? "The outcome becomes unknown; a person reconciles it" : "Another attempt may take over: only if the provider dedupes on the downstream key"}
              error={fields["policy.takeover"]}
            >
              {(props) => (
                <select {...props} value={draft.takeover} onChange={(e) => set("takeover", e.target.value as Draft["takeover"])}>
                  <option value="never">never</option>
                  <option value="deduplicated">deduplicated</option>
                </select>
              )}
            </Field>
            <Field
              path="policy.approval"
              label="Approval"
              hint={draft.approval === "required" ? "A person approves each call's exact arguments first" : "Claims run without a person"}
              error={fields["policy.approval"]}
            >
              {(props) => (
                <select {...props} value={draft.approval} onChange={(e) => set("approval", e.target.value as Draft["approval"])}>
                  <option value="none">none</option>
                  <option value="required">required</option>
                </select>
              )}
            </Field>
            {numberField("approvalTtlSeconds", "policy.approvalTtlSeconds", "Approval expires after (seconds)", "60–2 592 000 (30 days)")}
            {numberField("resultRetentionHours", "policy.resultRetentionHours", "Result retention (hours)", "1–2160; replays are served this long")}
          </div>
        </fieldset>
        <Field path="reason" label="Reason (recorded in the audit log)" error={fields.reason}>
          {(props) => <input {...props} type="text" value={draft.reason} placeholder="e.g. Stripe now dedupes on the downstream key" onChange={(e) => set("reason", e.target.value)} />}
        </Field>
        <DialogActions label="Save policy" busyLabel="Saving…" busy={busy} onCancel={onClose} />
      </form>
    </Modal>
  );
}

const knownPaths = new Set([
  "description",
  "policy.leaseSeconds",
  "policy.maxAttempts",
  "policy.backoff.baseMs",
  "policy.backoff.capMs",
  "policy.takeover",
  "policy.approval",
  "policy.approvalTtlSeconds",
  "policy.resultRetentionHours",
  "reason",
]);
