"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

export type NavItem = { href: string; label: string; count?: number; countLabel?: string };

// The sidebar's links; the current section is marked for screen readers and the eye.
export function NavLinks({ items }: { items: NavItem[] }) {
  const pathname = usePathname();
  return (
    <nav className="nav" aria-label="Console sections">
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
