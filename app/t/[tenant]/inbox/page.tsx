import { IntentLink } from "@/components/ui/intent-link";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { countInbox, inboxFacets, listInbox } from "@/lib/console/webhook-inbox";
import { hasInboxFilters, loadInboxQuery, serializeInboxQuery } from "@/lib/console/inbox-query";
import { decodeTimeCursor, encodeTimeCursor } from "@/lib/console/time-cursor";
import { PageHeader } from "@/components/ui/page-header";
import { AutoRefresh } from "@/components/ui/auto-refresh";
import { EmptyState } from "@/components/ui/empty-state";
import { InboxList } from "./_components/inbox-list";
import { InboxFilters } from "./_components/inbox-filters";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Inbox" };

export const dynamic = "force-dynamic";

const PAGE_SIZE = 25;

// GET /t/{tenant}/inbox – provider webhooks nobody could act on: match them to an operation, or ignore them with a reason
export default async function InboxPage({ params, searchParams }: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { tenant: slug } = await params;
  const { user, tenant } = await requireConsole(slug);
  const query = await loadInboxQuery(searchParams);
  const filter = { status: query.status, connection: query.connection, q: query.q };
  const filtered = hasInboxFilters(query);
  // A cursor that is not one of ours (an edited URL) starts from the newest rather than failing the page.
  const position = decodeTimeCursor(query.before);
  const cursor = position && { at: position.at, id: position.id };
  const handled = query.status === "handled";
  const [page, facets, matching] = await Promise.all([
    listInbox({ db: db(), tenantId: tenant.id, limit: PAGE_SIZE, before: cursor, filter }),
    inboxFacets({ db: db(), tenantId: tenant.id, handled: query.status === "handled" }),
    filtered ? countInbox({ db: db(), tenantId: tenant.id, filter }) : null,
  ]);
  const total = facets.byStatus.unmatched + facets.byStatus.unmapped + facets.byStatus.contradicting;
  const shown = matching ?? (handled ? facets.handled : total);
  const canMatch = can(user.role, "match-webhooks");
  const base = `/t/${tenant.slug}/inbox`;
  const link = (before: string | null) => `${base}${serializeInboxQuery({ ...query, before })}`;
  const empty = page.events.length === 0 && !cursor;
  return (
    <>
      <PageHeader
        title="Inbox"
        actions={<AutoRefresh page="inbox" />}
        description={
          handled
            ? `Events a person decided, the latest decision first: matched to an operation here, or ignored with a reason.${canMatch ? " An ignored event can still be matched." : ""}`
            : total
            ? `${total.toLocaleString("en-US")} verified webhook event${total === 1 ? "" : "s"} Tollgate could not act on by itself, newest first: no operation matched, the event type maps to no outcome, or the event contradicts a settled outcome.`
            : "Verified webhook events Tollgate could not act on by itself wait here."
        }
      />
      {canMatch || empty ? null : <p className="muted small">Your role ({user.role}) can read the inbox; matching and ignoring need an operator or an admin.</p>}
      {total > 0 || facets.handled > 0 ? <InboxFilters counts={{ all: total, ...facets }} /> : null}
      <InboxList
        events={page.events}
        tenant={tenant.slug}
        canMatch={canMatch}
        actor={`user:${user.email}`}
        now={page.now}
        empty={
          empty && handled && !query.q && !query.connection ? (
            <EmptyState title="Nothing handled yet">
              Events an operator matched to an operation or ignored are listed here, with who decided, when and why. <IntentLink href={base}>Back to the inbox</IntentLink>
            </EmptyState>
          ) : empty && handled ? (
            <EmptyState title="No handled event matches these filters">
              The search matches an event id, a provider event id, a correlation value or an event type exactly. An event still waiting is under{" "}
              <IntentLink href={`${base}${serializeInboxQuery({ ...query, status: null, before: null })}`}>All</IntentLink>.
            </EmptyState>
          ) : empty && filtered ? (
            <EmptyState title="No event in the inbox matches these filters">
              The search matches an event id, a provider event id, a correlation value or an event type exactly. <IntentLink href={base}>Show the whole inbox</IntentLink>
            </EmptyState>
          ) : empty ? (
            <EmptyState title="Nothing in the inbox">
              An event lands here when its correlation value names no operation of this tenant, when its type maps to no outcome in the connection, or
              when it contradicts an outcome already recorded. Match it to an operation (which settles an unknown one), or ignore it with a reason.
            </EmptyState>
          ) : null
        }
      />
      {empty ? null : (
        <nav className="pager" aria-label="Inbox pages">
          <span>
            {cursor
              ? `Events ${handled ? "decided" : "received"} before ${cursor.at.replace("T", " ").slice(0, 19)} UTC`
              : `The ${handled ? "latest" : "newest"} ${page.events.length} of ${shown.toLocaleString("en-US")}${filtered && (!handled || query.q || query.connection) ? " matching" : ""}`}
          </span>
          <span className="row">
            {cursor ? <IntentLink href={link(null)}>Newest</IntentLink> : null}
            {page.next ? <IntentLink href={link(encodeTimeCursor(page.next))}>Older →</IntentLink> : null}
          </span>
        </nav>
      )}
    </>
  );
}
