"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import type { ComponentProps } from "react";

type Props = Omit<ComponentProps<typeof Link>, "href" | "prefetch"> & { href: string };

// A link that prefetches its page when someone reaches for it (the pointer over it, keyboard
// focus, a touch), not when it is rendered. Next.js prefetches every <Link> in view; the
// sidebar's sections are dynamic pages with queries of their own, so every console page view
// rendered each section once more on the server (and again after each auto-refresh): more than
// half of a page view's server CPU, for pages the operator mostly never opens.
export function IntentLink({ href, onMouseEnter, onFocus, onTouchStart, ...props }: Props) {
  const router = useRouter();
  const prefetch = () => router.prefetch(href);
  return (
    <Link
      {...props}
      href={href}
      prefetch={false}
      onMouseEnter={(event) => {
        prefetch();
        onMouseEnter?.(event);
      }}
      onFocus={(event) => {
        prefetch();
        onFocus?.(event);
      }}
      onTouchStart={(event) => {
        prefetch();
        onTouchStart?.(event);
      }}
    />
  );
}
