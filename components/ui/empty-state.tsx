import type { ReactNode } from "react";

// What a page says when there is nothing to show, and what to do about it.
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="panel" role="status" style={{ textAlign: "center", padding: "32px 16px" }}>
      <strong>{title}</strong>
      {children ? <div className="muted" style={{ marginTop: 6 }}>{children}</div> : null}
    </div>
  );
}
