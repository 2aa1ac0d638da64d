"use client";

import { useEffect, useRef, type ReactNode } from "react";

// A native modal <dialog>: focus moves into it (to its [data-autofocus] element if any), Tab stays inside, Escape closes it, and focus
// returns to the control that opened it (by hand: the dialog leaves the DOM rather than closing,
// so the browser's own restore does not happen). Rendered only while open.
//
// While `busy` (its form's request is on its way) neither Escape nor × closes it: the answer must
// land where the person can read it. A refusal would go unseen, and a created key's or user's
// one-time secret would be lost with the closed dialog.
export function Modal({
  title,
  description,
  onClose,
  children,
  wide = false,
  busy = false,
}: {
  title: string;
  description?: ReactNode;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
  busy?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    // showModal() focuses the dialog's first focusable element (the × button): React's autoFocus
    // ran before it and lost. The field a dialog is about says so with data-autofocus.
    dialog?.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    return () => {
      dialog?.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={`console-dialog${wide ? " wide" : ""}`}
      aria-labelledby="console-dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      <div className="dialog-head">
        <h2 id="console-dialog-title">{title}</h2>
        <button type="button" className="dismiss" aria-label="Close" onClick={onClose} disabled={busy}>
          ×
        </button>
      </div>
      {description ? <div className="muted dialog-desc">{description}</div> : null}
      {children}
    </dialog>
  );
}
