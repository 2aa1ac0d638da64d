"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { Modal } from "../../_components/modal";
import { Field } from "../../_components/field";
import { SecretShownOnce } from "../../_components/secret-shown-once";
import { problemLine, sendJson, type FieldErrors } from "../../_components/send-json";
import { DialogActions } from "@/components/ui/dialog-actions";

type Saved = { name: string; url: string; events: string[]; secret?: string };
// updatedAt: the subscription as the page showed it; an edit saved over a change made since is refused.
export type SubscriptionDraft = { name: string; url: string; events: string[]; updatedAt: string };

const help: Record<string, string> = {
  "operation.succeeded": "an operation succeeded (agent, webhook, probe or operator)",
  "operation.failed": "an operation failed for good",
  "operation.unknown": "nobody knows whether the call took effect: reconcile",
  "operation.resolved": "an unknown outcome was settled (operator, webhook or probe)",
  "approval.requested": "a tool call waits for a person's approval",
  "approval.decided": "an approval was approved, rejected or expired",
  "webhook.unmatched": "a provider's event matched no operation, or contradicts one",
};

// "New subscription" / "Edit": name, URL and event types. Creating (or rotating) answers with the
// signing secret, shown here once.
export function SubscriptionButton({ tenant, eventTypes, existing }: { tenant: string; eventTypes: readonly string[]; existing?: SubscriptionDraft }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className={existing ? undefined : "primary"}
        style={{ whiteSpace: "nowrap" }}
        onClick={() => setOpen(true)}
        aria-label={existing ? `Edit ${existing.name}` : undefined}
      >
        {existing ? "Edit" : "New subscription"}
      </button>
      {open ? <SubscriptionDialog tenant={tenant} eventTypes={eventTypes} existing={existing} onClose={() => setOpen(false)} /> : null}
    </>
  );
}

function SubscriptionDialog({ tenant, eventTypes, existing, onClose }: { tenant: string; eventTypes: readonly string[]; existing?: SubscriptionDraft; onClose: () => void }) {
  const router = useRouter();
  // The subscription as the dialog opened on it: the save says which version it edits (the page
  // may refresh behind the dialog; its values stay the ones the person edits).
  const [basis] = useState(existing);
  const [name, setName] = useState(existing?.name ?? "");
  const [url, setUrl] = useState(existing?.url ?? "");
  const [events, setEvents] = useState<string[]>(existing?.events ?? ["operation.unknown"]);
  const [rotate, setRotate] = useState(false);
  const [fields, setFields] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<Saved | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const res = await sendJson<Saved>(`/api/console/${tenant}/subscriptions`, "POST", {
      name: name.trim(),
      url: url.trim(),
      events,
      ...(rotate ? { rotateSecret: true } : {}),
      ...(basis ? { seenUpdatedAt: basis.updatedAt } : { create: true }),
    });
    setBusy(false);
    if (!res.ok) {
      // The name is taken, or the subscription changed since: the list behind shows it as it is now.
      if (res.status === 409) router.refresh();
      setFields(res.fields);
      setProblem(problemLine(res, existing ? "Nothing was changed." : "No subscription was created.", ["name", "url", "events"]));
      return;
    }
    router.refresh();
    if (res.data.secret) setSaved(res.data);
    else onClose();
  }

  if (saved?.secret) {
    return (
      <SecretShownOnce
        title="Copy the signing secret now"
        warning={
          <>
            <strong>This is the only time the secret is shown.</strong> Tollgate keeps it encrypted to sign deliveries; if it is lost, rotate it.
          </>
        }
        label={`Signing secret of ${saved.name}`}
        value={saved.secret}
        hint={
          <>
            Every delivery carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> (Standard Webhooks): verify them with
            this secret, and dedupe on <code>webhook-id</code>, which stays the same when an event is sent again.
          </>
        }
        doneLabel="I have stored it"
        onClose={onClose}
      />
    );
  }

  return (
    <Modal title={existing ? `Edit ${existing.name}` : "New event subscription"} description="Tollgate POSTs each chosen event to the URL, signed, at least once; failures are retried for 24 h." onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate className="stack">
        {problem ? (
          <div className="error" role="alert">
            {problem}
          </div>
        ) : null}
        {existing ? null : (
          <Field path="name" label="Name" hint="Lowercase letters, digits and _ . -, e.g. ops-pager" error={fields.name}>
            {(props) => <input {...props} type="text" autoComplete="off" spellCheck={false} value={name} onChange={(e) => setName(e.target.value)} required />}
          </Field>
        )}
        <Field path="url" label="Endpoint URL" hint="https://… (http is accepted for internal endpoints)" error={fields.url}>
          {(props) => <input {...props} type="url" autoComplete="off" spellCheck={false} value={url} onChange={(e) => setUrl(e.target.value)} required />}
        </Field>
        <fieldset>
          <legend>Events</legend>
          <div className="stack">
            {eventTypes.map((t) => (
              <label key={t} className="choice">
                <input type="checkbox" checked={events.includes(t)} onChange={(e) => setEvents((c) => (e.target.checked ? [...c, t] : c.filter((x) => x !== t)))} />
                <code>{t}</code> <span className="muted small">{help[t]}</span>
              </label>
            ))}
          </div>
          {fields.events ? <span className="field-error">{fields.events}</span> : null}
        </fieldset>
        {existing ? (
          <label className="choice">
            <input type="checkbox" checked={rotate} onChange={(e) => setRotate(e.target.checked)} /> Rotate the signing secret (the old one stops working at once)
          </label>
        ) : null}
        <DialogActions label={existing ? "Save" : "Create subscription"} busyLabel="Saving…" busy={busy} onCancel={onClose} />
      </form>
    </Modal>
  );
}
