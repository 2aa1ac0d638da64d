"use client";

import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from "react";

// What the last action on a page did ("Resolved as succeeded", "Flag cleared"), where the
// button that did it may vanish: the page refreshes to what is stored, and a resolved
// operation has no Resolve button and a cleared flag no notice. The provider and the slot stay
// mounted across `router.refresh()`, so the message survives it; focus moves to the message
// (not to the page's body, where it falls when the focused button leaves the DOM), and it is a
// live region for screen readers. Without a provider, `useActionNotice` returns null and the
// caller keeps its own status text.

type Notice = { id: number; content: ReactNode };
type Ctx = { notice: Notice | null; show: (content: ReactNode) => void; dismiss: () => void };

const NoticeContext = createContext<Ctx | null>(null);

export function ActionNoticeProvider({ children }: { children: ReactNode }) {
  const [notice, setNotice] = useState<Notice | null>(null);
  const value: Ctx = {
    notice,
    show: (content) => setNotice((prev) => ({ id: (prev?.id ?? 0) + 1, content })),
    dismiss: () => setNotice(null),
  };
  return <NoticeContext.Provider value={value}>{children}</NoticeContext.Provider>;
}

export function useActionNotice(): ((content: ReactNode) => void) | null {
  return useContext(NoticeContext)?.show ?? null;
}

export function ActionNoticeSlot() {
  const ctx = useContext(NoticeContext);
  if (!ctx?.notice) return null;
  return (
    <FocusedNotice key={ctx.notice.id} onDismiss={ctx.dismiss}>
      {ctx.notice.content}
    </FocusedNotice>
  );
}

// A dismissible status notice that takes focus (and scrolls into view) when it mounts: give it
// a new `key` for each new message.
export function FocusedNotice({ onDismiss, children }: { onDismiss: () => void; children: ReactNode }) {
  const box = useTakeFocus<HTMLDivElement>();
  return (
    <div ref={box} tabIndex={-1} className="notice row focus-target" role="status" style={{ justifyContent: "space-between" }}>
      <span>{children}</span>
      <button type="button" className="dismiss" onClick={onDismiss} aria-label="Dismiss">
        ×
      </button>
    </div>
  );
}

// Server-rendered news that must take focus when it appears (a decision that was not recorded:
// the form that had focus left the page with it).
export function TakeFocus({ children }: { children: ReactNode }) {
  const box = useTakeFocus<HTMLDivElement>();
  return (
    <div ref={box} tabIndex={-1} className="focus-target">
      {children}
    </div>
  );
}

// The element to focus (and bring into view) on mount, and again whenever `trigger` changes to
// something truthy: where focus goes when what had it leaves the page. The element needs
// tabIndex={-1} and the focus-target class (no outline for a box that is not a control).
export function useTakeFocus<T extends HTMLElement>(trigger: unknown = true) {
  const ref = useRef<T>(null);
  useEffect(() => {
    if (!trigger) return;
    ref.current?.focus();
    ref.current?.scrollIntoView({ block: "nearest" });
  }, [trigger]);
  return ref;
}
