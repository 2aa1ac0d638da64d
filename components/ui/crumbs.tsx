"use client";

import { IntentLink } from "@/components/ui/intent-link";
import { usePathname, useSearchParams } from "next/navigation";
import { useEffect, useSyncExternalStore } from "react";

// The breadcrumb of a detail page (an operation's trace, an approval) back to its list, with the
// list's filters, sort and page as the user left them in this tab (console review: "Operations"
// went back to the unfiltered first page, and a search had to be built again after each trace).
// The list remembers its query with RememberListQuery, and ForgetListsLeft forgets it once the
// tab goes anywhere but the list and its detail pages: a trace opened from a shared link, a new
// tab, the inbox or the reconcile queue goes to the list's plain URL, not to filters the tab used
// an hour ago (console review).

const PREFIX = "tollgate:list-query:";
const storageKey = (path: string) => `${PREFIX}${path}`;

// Nothing to subscribe to: the list writes its query before any detail page of the tab reads it.
const noSubscription = () => () => {};

export function Crumbs({ list, current }: { list: { href: string; label: string }; current: string }) {
  // The server renders the plain list URL; the browser's first render reads this tab's query.
  const query = useSyncExternalStore(noSubscription, () => readQuery(list.href), () => "");
  return (
    <nav aria-label="Breadcrumb" className="crumbs">
      <IntentLink href={`${list.href}${query}`}>{list.label}</IntentLink>
      <span aria-hidden="true">/</span>
      <span aria-current="page" className="mono">
        {current}
      </span>
    </nav>
  );
}

// Rendered by a list page: keeps its current query string for this tab's breadcrumbs.
export function RememberListQuery({ path }: { path: string }) {
  const params = useSearchParams();
  const query = params.toString();
  useEffect(() => {
    try {
      sessionStorage.setItem(storageKey(path), query ? `?${query}` : "");
    } catch {
      // Storage refused (a private window's quota, a policy): the breadcrumb goes to the plain list.
    }
  }, [path, query]);
  return null;
}

function readQuery(path: string): string {
  try {
    const query = sessionStorage.getItem(storageKey(path)) ?? "";
    return query.startsWith("?") ? query : "";
  } catch {
    return "";
  }
}

// Rendered once by the console's layout: on every page change, forgets each remembered list the
// tab is no longer in (neither the list nor one of its detail pages).
export function ForgetListsLeft() {
  const pathname = usePathname();
  useEffect(() => {
    try {
      for (let i = sessionStorage.length - 1; i >= 0; i--) {
        const key = sessionStorage.key(i);
        if (!key?.startsWith(PREFIX)) continue;
        const list = key.slice(PREFIX.length);
        if (pathname !== list && !pathname.startsWith(`${list}/`)) sessionStorage.removeItem(key);
      }
    } catch {
      // Storage refused: nothing was remembered either.
    }
  }, [pathname]);
  return null;
}
