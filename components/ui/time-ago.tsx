"use client";

import { formatAge } from "@/components/ui/format-age";
import { useTickingNow } from "@/components/ui/use-ticking-now";

// "3 min ago" for scanning, with the exact UTC time on hover and for screen readers. It keeps
// counting while the page stays open (an operator's queue left open for an hour said "5 s ago"
// of what was then an hour old), from the server's `now` so no browser clock skews it.
export function TimeAgo({ at, now }: { at: Date | string | null; now: number }) {
  const current = useTickingNow(now, 10_000);
  if (!at) return <span className="muted">—</span>;
  const date = typeof at === "string" ? new Date(at) : at;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {formatAge(current - date.getTime())}
    </time>
  );
}
