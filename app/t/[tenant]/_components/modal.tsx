"use client";

import { useEffect, useRef, type ReactNode } from "react";

// A native modal <dialog>: focus moves into it (to its [data-autofocus] element if any), Tab stays inside, Escape closes it, and focus
// returns to the control that opened it (by hand: the dialog leaves the DOM rather than closing,
// so the browser's own restore does not happen). Rendered only while open.
//
// While `busy` (its form's request is on its way) neither Escape nor × closes it: the answer must
// land where the person can read it. A refusal would go unseen, and a created key's or user's
// one-time secret would be lost with the closed dialog. A dialog showing such a secret is not
// closed by Escape at all (`escapeCloses={false}`): one key press lost it for good.
//
// Focus is never left on the page's <body> (a screen reader or keyboard user would have to start
// over from the top): when the request ends, a dialog whose focused button was disabled meanwhile
// focuses its error, if any, else its first field; when it closes and its opener has gone (a
// revoked key's row), the page's main content takes focus.
export function Modal({
  title,
  description,
  onClose,
  children,
  wide = false,
  busy = false,
  escapeCloses = true,
}: {
  title: string;
  description?: ReactNode;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
  busy?: boolean;
  escapeCloses?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const wasBusy = useRef(false);
  useEffect(() => {
    const dialog = ref.current;
    const ended = wasBusy.current && !busy;
    wasBusy.current = busy;
    if (!ended || !dialog?.open || dialog.contains(document.activeElement)) return;
    const target = dialog.querySelector<HTMLElement>("[role=alert], .error") ?? dialog.querySelector<HTMLElement>("[data-autofocus], input:not([disabled]), select, textarea");
    if (target && !target.matches("input, select, textarea, button, [tabindex]")) target.tabIndex = -1;
    target?.focus();
  }, [busy]);
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    // showModal() focuses the dialog's first focusable element (the × button): React's autoFocus
    // ran before it and lost. The field a dialog is about says so with data-autofocus.
    dialog?.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    return () => {
      dialog?.close();
      if (opener?.isConnected && opener !== document.body) opener.focus();
      else focusMain();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={`console-dialog${wide ? " wide" : ""}`}
      aria-labelledby="console-dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        if (!busy && escapeCloses) onClose();
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

function focusMain(): void {
  const main = document.querySelector<HTMLElement>("main");
  if (!main) return;
  if (!main.hasAttribute("tabindex")) main.tabIndex = -1;
  main.focus({ preventScroll: true });
}
