"use client";

import type { ReactNode } from "react";
import { CopySecret } from "./copy-secret";
import { Modal } from "./modal";

// The dialog after creating something whose secret Tollgate will never show again (an API key,
// a subscription's signing secret, a generated password): why it is shown only now, the secret
// with a Copy button (focused first, not ×), how it is used, and one button to close. Escape does
// not close it: the secret would be lost with one key press.
export function SecretShownOnce(props: { title: string; warning: ReactNode; label: string; value: string; hint?: ReactNode; doneLabel: string; onClose: () => void }) {
  return (
    <Modal title={props.title} onClose={props.onClose} escapeCloses={false}>
      <div className="stack">
        <div className="notice warn-notice" role="alert">
          {props.warning}
        </div>
        <CopySecret label={props.label} value={props.value} />
        {props.hint ? <p className="small muted">{props.hint}</p> : null}
        <div className="row dialog-actions">
          <button type="button" className="primary" onClick={props.onClose}>
            {props.doneLabel}
          </button>
        </div>
      </div>
    </Modal>
  );
}
