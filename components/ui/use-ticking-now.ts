"use client";

import { useEffect, useState } from "react";

// "Now" for relative times on a page that stays open: the server's `now` on the first render
// (so the HTML and the hydrated page agree), then advanced every `everyMs` by the time elapsed on
// the browser's clock (a skewed browser clock does not matter). A new server `now` (a refresh)
// starts again from it.
export function useTickingNow(now: number, everyMs: number): number {
  const [tick, setTick] = useState<{ from: number; current: number } | null>(null);
  useEffect(() => {
    const mountedAt = Date.now();
    const timer = setInterval(() => setTick({ from: now, current: now + (Date.now() - mountedAt) }), everyMs);
    return () => clearInterval(timer);
  }, [now, everyMs]);
  return tick && tick.from === now ? tick.current : now;
}
