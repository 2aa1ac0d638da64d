"use client";

import { useRef, useState } from "react";
import { copyText } from "@/components/ui/copy-text";

// A secret shown once: selectable text plus a Copy button.
export function CopySecret({ label, value }: { label: string; value: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  async function copy() {
    const done = await copyText(value);
    // Refused: the text is left selected for Ctrl+C.
    if (!done) input.current?.select();
    setCopied(done ? "yes" : "no");
  }
  return (
    <div className="stack secret-box">
      <label>
        {label}
        <span className="row">
          <input ref={input} className="mono secret-value" readOnly value={value} onFocus={(e) => e.currentTarget.select()} spellCheck={false} />
          <button type="button" className="primary" onClick={copy} data-autofocus>
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
