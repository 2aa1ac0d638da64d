import { IntentLink } from "@/components/ui/intent-link";
import type { ReactNode } from "react";
import type { Count } from "@/lib/console/overview-stats";

// One number on the overview. With a link, the whole card opens the matching operations.
// A capped count shows as "10,000+" (at least that many).
export function StatCard({ label, value, href, tone, children }: { label: string; value: Count; href?: string; tone?: "ok" | "bad"; children?: ReactNode }) {
  const text = `${value.value.toLocaleString("en-US")}${value.capped ? "+" : ""}`;
  const body = (
    <>
      <div className="k">{label}</div>
      <div className={`v${tone && value.value ? ` tone-${tone}` : ""}`}>{text}</div>
      {children ? <div className="card-note">{children}</div> : null}
    </>
  );
  return href ? (
    <IntentLink href={href} className="card stat-card" title="Show these operations">
      {body}
    </IntentLink>
  ) : (
    <div className="card stat-card">{body}</div>
  );
}
