"use client";

import { useEffect, useState } from "react";
import { formatDuration } from "@/components/ui/time-ago";

// Time left before an approval expires, ticking. Starts from the server's `now` so the first
// paint matches the server's HTML (no hydration mismatch), then advances by the time elapsed in the browser.
export function Countdown({ until, now }: { until: string; now: number }) {
  const [current, setCurrent] = useState(now);
  useEffect(() => {
    // Elapsed time on the browser's clock added to the server's: a skewed browser clock does not matter.
    const mountedAt = Date.now();
    const timer = setInterval(() => setCurrent(now + (Date.now() - mountedAt)), 1000);
    return () => clearInterval(timer);
  }, [now]);
  const left = Date.parse(until) - current;
  const urgent = left < 15 * 60 * 1000;
  return (
    <time dateTime={until} title={`Expires ${until}`} className={left <= 0 ? "danger-text" : urgent ? "warn-text" : undefined}>
      {left <= 0 ? "expired" : `${formatDuration(left)} left`}
    </time>
  );
}
