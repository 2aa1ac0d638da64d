"use client";

import { useRef } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import type { ComponentProps } from "react";

type Props = Omit<ComponentProps<typeof Link>, "href" | "prefetch"> & { href: string };

// How long the pointer (or keyboard focus) rests on a link before its page is prefetched: a
// pointer crossing a table, or Tab run down a list, passes each link sooner and asks for nothing.
const RESTING_MS = 80;

// A link that prefetches its page when someone reaches for it (the pointer resting on it,
// keyboard focus, a touch), not when it is rendered. Next.js prefetches every <Link> in view;
// the console's pages are dynamic, with queries of their own, so every page view rendered each
// sidebar section and each row's trace once more on the server (and again after each
// auto-refresh): more than half of a page view's server CPU, for pages mostly never opened.
// A click navigates in the browser as any Link does; only the prefetch moved.
export function IntentLink({ href, onMouseEnter, onMouseLeave, onFocus, onBlur, onTouchStart, ...props }: Props) {
  const router = useRouter();
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const cancel = () => {
    if (pending.current) clearTimeout(pending.current);
    pending.current = null;
  };
  const soon = () => {
    cancel();
    pending.current = setTimeout(() => {
      pending.current = null;
      router.prefetch(href);
    }, RESTING_MS);
  };
  return (
    <Link
      {...props}
      href={href}
      prefetch={false}
      onMouseEnter={(event) => {
        soon();
        onMouseEnter?.(event);
      }}
      onMouseLeave={(event) => {
        cancel();
        onMouseLeave?.(event);
      }}
      onFocus={(event) => {
        soon();
        onFocus?.(event);
      }}
      onBlur={(event) => {
        cancel();
        onBlur?.(event);
      }}
      onTouchStart={(event) => {
        // A touch is a tap on its way: no wait.
        cancel();
        router.prefetch(href);
        onTouchStart?.(event);
      }}
    />
  );
}
