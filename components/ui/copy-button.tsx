"use client";

import { useEffect, useState } from "react";
import { copyText } from "@/components/ui/copy-text";

// A small "Copy" beside an id an operator takes elsewhere: the downstream key to a provider's
// dashboard, an operation id to a ticket, a workflow id to the orchestrator's logs. Says
// "Copied" for two seconds (a live region), or that the browser refused.
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "refused">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <button type="button" className="copy-button" aria-label={`Copy ${label}`} title={`Copy ${label}`} onClick={async () => setState((await copyText(value)) ? "copied" : "refused")}>
      <span aria-live="polite">{state === "copied" ? "Copied" : state === "refused" ? "Copy blocked: select it" : "Copy"}</span>
    </button>
  );
}
