import { isStorableDate } from "@/lib/db/storable-date";
import { isStorableText } from "@/lib/console/storable-text";

// The page position of the reconcile queue and the inbox in their URLs: "<ISO time>~<row id>".
export type TimeCursor = { at: string; id: string };

export function encodeTimeCursor(cursor: TimeCursor): string {
  return `${cursor.at}~${cursor.id}`;
}

// A cursor this server did not write reads as no cursor (the first page) rather than failing
// the page. The regex alone let through times PostgreSQL refuses ("2024-13-45T99:99:99Z",
// year 0000): a 500. JavaScript reads some impossible times without complaint, rolling
// "2024-02-30" over to March 1 and "T24:00" to the next day; a time whose fields do not survive
// that round trip is no position we wrote, so it is refused too, and what reaches SQL is the
// Date's own ISO text, never the URL's.
export function decodeTimeCursor(value: string | null): TimeCursor | null {
  const match = value?.match(/^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)~(.{1,100})$/);
  const [, text, id] = match ?? [];
  if (!text || !id || !isStorableText(id)) return null;
  const at = new Date(text);
  if (!isStorableDate(at) || at.toISOString().slice(0, 19) !== text.slice(0, 19)) return null;
  return { at: at.toISOString(), id };
}
