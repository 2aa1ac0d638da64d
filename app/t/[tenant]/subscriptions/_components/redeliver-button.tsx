"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { sendJson } from "../../_components/send-json";

// "Redeliver" on a dead delivery: back to pending with a fresh 24 h window; same webhook-id.
export function RedeliverButton({ tenant, id, label }: { tenant: string; id: string; label: string }) {
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  async function redeliver() {
    setBusy(true);
    setProblem(null);
    const res = await sendJson(`/api/console/${tenant}/deliveries/${encodeURIComponent(id)}/redeliver`, "POST", {});
    setBusy(false);
    if (!res.ok) setProblem(res.detail);
    router.refresh();
  }
  return (
    <span className="row">
      <button type="button" onClick={() => void redeliver()} disabled={busy} aria-label={`Redeliver ${label}`}>
        {busy ? "Sending…" : "Redeliver"}
      </button>
      {problem ? (
        <span className="field-error" role="alert">
          {problem}
        </span>
      ) : null}
    </span>
  );
}
