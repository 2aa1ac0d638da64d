import { createLoader, createSerializer, parseAsString, parseAsStringLiteral, type inferParserType } from "nuqs/server";
import { parseAsText } from "@/lib/console/text-param";

// The inbox's URL: why the events are there, which connection, one value to find, and the page
// position, so a narrowed inbox is a link. No Prisma here: the client filter bar uses these too.

export const inboxStatuses = ["unmatched", "unmapped", "contradicting"] as const;
export type InboxStatus = (typeof inboxStatuses)[number];

// "handled" is not a reason an event waits but the inbox's history: the events a person decided
// (matched here or ignored), newest decision first, so a mistaken ignore can still be found and
// matched, and a shift can see what the last one did.
export const inboxViews = [...inboxStatuses, "handled"] as const;
export type InboxView = (typeof inboxViews)[number];

export const inboxQueryParsers = {
  status: parseAsStringLiteral(inboxViews),
  connection: parseAsText(100).withDefault(""),
  // Long enough for any provider event id (255) or correlation value: an exact search cut short finds nothing.
  q: parseAsText(2000).withDefault(""),
  // "<received at>~<event id>" (lib/console/time-cursor.ts); anything else reads as the first page.
  before: parseAsString,
};

export type InboxQuery = inferParserType<typeof inboxQueryParsers>;
export const loadInboxQuery = createLoader(inboxQueryParsers);
export const serializeInboxQuery = createSerializer(inboxQueryParsers);

export function hasInboxFilters(q: Pick<InboxQuery, "status" | "connection" | "q">): boolean {
  return Boolean(q.status || q.connection || q.q);
}
