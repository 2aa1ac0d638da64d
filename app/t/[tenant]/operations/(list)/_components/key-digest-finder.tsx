"use client";

import { useId, useState, type FormEvent } from "react";
import { sendJson } from "../../../_components/send-json";

// "Find by Idempotency-Key": an operator often has the raw key (from an agent's log), but
// Tollgate stores and searches only its SHA-256. The key goes to the server in a POST body and
// comes back as the digest the search box then holds; the raw key never enters the URL.
// The SHA-256 of a raw key, asked of the server (a POST body: the key stays out of any URL).
export async function keyDigestOf(tenant: string, idempotencyKey: string) {
  return sendJson<{ keyDigest: string }>(`/api/console/${encodeURIComponent(tenant)}/operations/key-digest`, "POST", { idempotencyKey });
}

// Under a search that found nothing: an operator may have typed a raw Idempotency-Key there (the
// box searches ids and digests, not keys). One click searches its digest instead, and the raw key
// leaves the address (the entry is replaced, not pushed).
export function SearchAsKey({ tenant, text, onDigest }: { tenant: string; text: string; onDigest: (digest: string) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function lookUp() {
    setBusy(true);
    const res = await keyDigestOf(tenant, text);
    setBusy(false);
    if (!res.ok) return setError(res.fields.idempotencyKey ? `It cannot be an Idempotency-Key: it ${res.fields.idempotencyKey}.` : res.detail);
    onDigest(res.data.keyDigest);
  }
  return (
    <p>
      Is it an Idempotency-Key? The search takes ids and key digests, never raw keys.{" "}
      <button type="button" className="link-button" onClick={() => void lookUp()} disabled={busy}>
        {busy ? "Looking it up…" : "Look it up as an Idempotency-Key"}
      </button>
      {error ? (
        <span className="field-error" role="alert">
          {" "}
          {error}
        </span>
      ) : null}
    </p>
  );
}

export function KeyDigestFinder({ tenant, onDigest }: { tenant: string; onDigest: (digest: string) => void }) {
  const id = useId();
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function find(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    const res = await keyDigestOf(tenant, key);
    setBusy(false);
    if (!res.ok) {
      setError(res.fields.idempotencyKey ? `The key ${res.fields.idempotencyKey}.` : res.detail);
      return;
    }
    setError(null);
    setKey("");
    onDigest(res.data.keyDigest);
  }

  return (
    <details className="ops-key-finder">
      <summary>Find by Idempotency-Key</summary>
      <form onSubmit={find} className="row" noValidate>
        <label htmlFor={`${id}-key`} className="small">
          Raw key
        </label>
        <input
          id={`${id}-key`}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          aria-invalid={error ? true : undefined}
          aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
        />
        <button type="submit" disabled={busy || !key}>
          {busy ? "Finding…" : "Find"}
        </button>
        <span id={`${id}-hint`} className="muted small">
          Searched by its SHA-256; the key itself is not kept in the address.
        </span>
        {error ? (
          <span id={`${id}-error`} className="field-error" role="alert">
            {error}
          </span>
        ) : null}
      </form>
    </details>
  );
}
