import { unstorableText } from "@/lib/http/json-limits";

// Text from a console URL (a filter, a cursor's id, a path segment) becomes a SQL parameter, and
// PostgreSQL refuses U+0000 and half of a surrogate pair in text: the page failed with a 500.
// Such a value names nothing that is stored, so the console ignores the filter (or the cursor),
// or answers "not found". No Prisma and no Node APIs here: the URL parsers run in the browser too.
export function isStorableText(value: string): boolean {
  return !unstorableText.test(value);
}

// The first `maxLength` UTF-16 units of `value`, one fewer where the cut would split a surrogate
// pair (an emoji at the limit), which would itself be unstorable.
export function cutText(value: string, maxLength: number): string {
  const cut = value.slice(0, maxLength);
  const last = cut.charCodeAt(cut.length - 1);
  return cut.length < value.length && last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}
