"use client";

import { useEffect, useRef } from "react";
import { usePathname, useSearchParams } from "next/navigation";
import { IntentLink } from "@/components/ui/intent-link";
import { traceOrigin } from "@/lib/console/trace-origin";

export type NavItem = { href: string; label: string; count?: number; countLabel?: string };

// The sidebar's links; the current section is marked for screen readers and the eye. On a
// phone they form one row that scrolls sideways inside the top bar; the current one is brought
// into that row's view (only the row scrolls, never the page).
export function NavLinks({ items }: { items: NavItem[] }) {
  const pathname = usePathname();
  // A trace opened from a worklist belongs to that section (its breadcrumb leads there too).
  const from = traceOrigin(useSearchParams().get("from"));
  const section = from && /^\/t\/[^/]+\/operations\/[^/]+$/.test(pathname) ? `${pathname.split("/").slice(0, 3).join("/")}/${from}` : pathname;
  const navRef = useRef<HTMLElement>(null);
  useEffect(() => {
    const nav = navRef.current;
    const link = nav?.querySelector<HTMLElement>('[aria-current="page"]');
    if (!nav || !link || nav.scrollWidth <= nav.clientWidth) return;
    const navBox = nav.getBoundingClientRect();
    const linkBox = link.getBoundingClientRect();
    nav.scrollLeft += linkBox.left - navBox.left - (navBox.width - linkBox.width) / 2;
  }, [pathname]);
  return (
    <nav className="nav" aria-label="Console sections" ref={navRef}>
      {items.map((item) => {
        const current = item.href.split("/").length <= 3 ? section === item.href : section.startsWith(item.href);
        return (
          <IntentLink key={item.href} href={item.href} aria-current={current ? "page" : undefined}>
            <span>{item.label}</span>
            {item.count ? (
              <span className="nav-count" aria-label={`${item.countLabel ?? item.count} waiting`}>
                {item.countLabel ?? item.count}
              </span>
            ) : null}
          </IntentLink>
        );
      })}
    </nav>
  );
}
