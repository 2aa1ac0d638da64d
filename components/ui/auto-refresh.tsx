"use client";

import { useRouter } from "next/navigation";
import { useEffect, useSyncExternalStore, useTransition } from "react";

// "Auto-refresh": a queue an operator keeps open (reconcile, inbox, approvals, the overview)
// fetches what is stored again every 15 s, so new unknowns, webhook events and requests show
// up without a reload. Off by default; the choice is kept per page in this browser. It skips a
// beat while the tab is hidden or a dialog is open (a refresh must not move what a person is
// deciding about) and while focus is in a text field. A refresh still on its way when the next
// beat comes is not replaced by another (on a slow server each would cancel the one before and
// none would land): the beat restarts once it has landed. One that has not landed in a minute is
// given up on and replaced, so a request lost on the way does not stop the page refreshing.

const EVERY_MS = 15_000;
const STALLED_AFTER_MS = 60_000;
const listeners = new Set<() => void>();
const storageKey = (page: string) => `tollgate:auto-refresh:${page}`;

function subscribe(onChange: () => void): () => void {
  listeners.add(onChange);
  window.addEventListener("storage", onChange);
  return () => {
    listeners.delete(onChange);
    window.removeEventListener("storage", onChange);
  };
}

function read(page: string): boolean {
  try {
    return localStorage.getItem(storageKey(page)) === "on";
  } catch {
    return false;
  }
}

function write(page: string, on: boolean): void {
  try {
    localStorage.setItem(storageKey(page), on ? "on" : "off");
  } catch {
    // Storage refused: the choice lasts until the page is left.
  }
  for (const l of listeners) l();
}

function busy(): boolean {
  if (document.visibilityState !== "visible" || document.querySelector("dialog[open]")) return true;
  const active = document.activeElement;
  return active instanceof HTMLTextAreaElement || (active instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit"].includes(active.type));
}

export function AutoRefresh({ page }: { page: string }) {
  const router = useRouter();
  const on = useSyncExternalStore(subscribe, () => read(page), () => false);
  const [refreshing, startTransition] = useTransition();
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(
      () => {
        if (!busy()) startTransition(() => router.refresh());
      },
      refreshing ? STALLED_AFTER_MS : EVERY_MS,
    );
    return () => clearInterval(timer);
  }, [on, refreshing, router]);
  return (
    <label className="auto-refresh small" title="Fetch this page again every 15 s while it is open" aria-busy={refreshing}>
      <input type="checkbox" checked={on} onChange={(e) => write(page, e.target.checked)} /> Auto-refresh
    </label>
  );
}
