"use client";

import { useEffect, useRef } from "react";
import Link from "next/link";
import { usePathname } from "next/navigation";

export type NavItem = { href: string; label: string; count?: number; countLabel?: string };

// The sidebar's links; the current section is marked for screen readers and the eye. On a
// phone they form one row that scrolls sideways inside the top bar; the current one is brought
// into that row's view (only the row scrolls, never the page).
export function NavLinks({ items }: { items: NavItem[] }) {
  const pathname = usePathname();
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
        const current = item.href.split("/").length <= 3 ? pathname === item.href : pathname.startsWith(item.href);
        return (
          <Link key={item.href} href={item.href} aria-current={current ? "page" : undefined}>
            <span>{item.label}</span>
            {item.count ? (
              <span className="nav-count" aria-label={`${item.countLabel ?? item.count} waiting`}>
                {item.countLabel ?? item.count}
              </span>
            ) : null}
          </Link>
        );
      })}
    </nav>
  );
}
