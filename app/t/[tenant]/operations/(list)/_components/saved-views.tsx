"use client";

import { useState, useTransition, type FormEvent } from "react";
import { IntentLink } from "@/components/ui/intent-link";
import { useRouter } from "next/navigation";

export type SavedViewItem = { id: string; name: string; query: string };

type Status = { kind: "ok" | "error"; text: string } | null;

// The signed-in person's saved filters for this tenant: each is a link (apply = follow it),
// the current one is marked, "Save view" stores the current filters under a name (the same
// name again replaces it), × deletes. Both changes go through the console API and are audited.
export function SavedViews({ tenant, views, current }: { tenant: string; views: SavedViewItem[]; current: string }) {
  const router = useRouter();
  const [saving, setSaving] = useState(false);
  const [name, setName] = useState("");
  const [status, setStatus] = useState<Status>(null);
  const [pending, startTransition] = useTransition();
  const base = `/t/${tenant}/operations`;
  const api = `/api/console/${tenant}/saved-views`;
  const active = views.find((v) => v.query === current);

  async function save(e: FormEvent) {
    e.preventDefault();
    setStatus(null);
    const res = await send(api, "POST", { name, query: current });
    if (!res.ok) return setStatus({ kind: "error", text: res.detail });
    setStatus({ kind: "ok", text: res.replaced ? `Replaced the view "${name.trim()}".` : `Saved "${name.trim()}".` });
    setSaving(false);
    setName("");
    startTransition(() => router.refresh());
  }

  async function remove(view: SavedViewItem) {
    if (!window.confirm(`Delete the saved view "${view.name}"? Its link keeps working; only the shortcut goes.`)) return;
    setStatus(null);
    const res = await send(`${api}/${encodeURIComponent(view.id)}`, "DELETE");
    if (!res.ok) return setStatus({ kind: "error", text: res.detail });
    setStatus({ kind: "ok", text: `Deleted "${view.name}".` });
    startTransition(() => router.refresh());
  }

  return (
    <div className="views" aria-busy={pending || undefined}>
      <nav aria-label="Saved views" className="views-list">
        <IntentLink href={base} className="view-chip" aria-current={current === "" ? "page" : undefined}>
          All operations
        </IntentLink>
        {views.map((view) => (
          <span key={view.id} className="view-chip" aria-current={active?.id === view.id ? "page" : undefined}>
            <IntentLink href={view.query ? `${base}?${view.query}` : base} title={view.query ? decodeQuery(view.query) : "no filters"}>
              {view.name}
            </IntentLink>
            <button type="button" className="view-delete" aria-label={`Delete saved view ${view.name}`} title="Delete this saved view" onClick={() => void remove(view)}>
              ×
            </button>
          </span>
        ))}
      </nav>
      {saving ? (
        <form className="row views-save" onSubmit={(e) => void save(e)}>
          <label className="visually-hidden" htmlFor="view-name">
            Name of the view
          </label>
          <input
            id="view-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="Name, e.g. Unknown payments"
            maxLength={80}
            required
            autoFocus
            onKeyDown={(e) => e.key === "Escape" && setSaving(false)}
          />
          <button type="submit" className="primary" disabled={!name.trim()}>
            Save
          </button>
          <button type="button" onClick={() => setSaving(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" onClick={() => setSaving(true)} disabled={Boolean(active)} title={active ? `These filters are saved as "${active.name}"` : "Save the current filters and sort under a name"}>
          Save view
        </button>
      )}
      {status ? (
        <span className={status.kind === "error" ? "views-status error-text" : "views-status muted"} role={status.kind === "error" ? "alert" : "status"}>
          {status.text}
        </span>
      ) : null}
    </div>
  );
}

function decodeQuery(query: string): string {
  return [...new URLSearchParams(query)].map(([k, v]) => `${k}: ${v}`).join(" · ");
}

type SendResult = { ok: true; replaced: boolean } | { ok: false; detail: string };

async function send(url: string, method: "POST" | "DELETE", body?: unknown): Promise<SendResult> {
  try {
    const res = await fetch(url, {
      method,
      headers: body ? { "content-type": "application/json" } : undefined,
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = (await res.json().catch(() => ({}))) as { detail?: string; replaced?: boolean };
    if (!res.ok) return { ok: false, detail: data.detail ?? `The server answered ${res.status}.` };
    return { ok: true, replaced: Boolean(data.replaced) };
  } catch {
    return { ok: false, detail: "The server could not be reached; nothing was changed." };
  }
}
