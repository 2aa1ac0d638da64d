"use client";

import { formatDuration } from "@/components/ui/format-age";
import { useTickingNow } from "@/components/ui/use-ticking-now";

// Time left before an approval expires, ticking every second from the server's `now`.
export function Countdown({ until, now }: { until: string; now: number }) {
  const current = useTickingNow(now, 1000);
  const left = Date.parse(until) - current;
  const urgent = left < 15 * 60 * 1000;
  return (
    <time dateTime={until} title={`Expires ${until}`} className={left <= 0 ? "danger-text" : urgent ? "warn-text" : undefined}>
      {left <= 0 ? "expired" : `${formatDuration(left)} left`}
    </time>
  );
}
