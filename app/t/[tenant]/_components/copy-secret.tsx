"use client";

import { useRef, useState } from "react";

// A secret shown once: selectable text plus a Copy button (the Clipboard API where the page
// is a secure context, else the selection and execCommand).
export function CopySecret({ label, value }: { label: string; value: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  async function copy() {
    try {
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(value);
      else {
        input.current?.select();
        if (!document.execCommand("copy")) throw new Error("copy refused");
      }
      setCopied("yes");
    } catch {
      input.current?.select();
      setCopied("no");
    }
  }
  return (
    <div className="stack secret-box">
      <label>
        {label}
        <span className="row">
          <input ref={input} className="mono secret-value" readOnly value={value} onFocus={(e) => e.currentTarget.select()} spellCheck={false} />
          <button type="button" className="primary" onClick={copy}>
            Copy
          </button>
        </span>
      </label>
      <span role="status" className="small muted">
        {copied === "yes" ? "Copied to the clipboard." : copied === "no" ? "Copy was blocked by the browser: the text is selected, press Ctrl+C." : ""}
      </span>
    </div>
  );
}
