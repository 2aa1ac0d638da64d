import { createParser, parseAsIsoDateTime } from "nuqs/server";

// A date PostgreSQL takes as sent by the pg adapter: years 1 to 9999. JavaScript parses more
// ("0000-06-01", "-100000-01-01"), which the adapter writes as text PostgreSQL refuses: a query
// failing with a 500 on a hand-edited cursor or URL instead of a 400 or an ignored filter.
export function isStorableDate(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
}

// nuqs's ISO date-time parser, with a date outside that range read as absent (the filter is ignored).
export const parseAsStorableDateTime = createParser({
  parse: (value: string) => {
    const date = parseAsIsoDateTime.parse(value);
    return date && isStorableDate(date) ? date : null;
  },
  serialize: (date: Date) => parseAsIsoDateTime.serialize(date),
});
