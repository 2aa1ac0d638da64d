import { createParser } from "nuqs/server";
import { cutText, isStorableText } from "@/lib/console/storable-text";

// A free-text URL filter, trimmed and cut to `maxLength`. Filters are forgiving, as for dates:
// text PostgreSQL cannot take (U+0000, a lone surrogate) is ignored, not a 500.
export const parseAsText = (maxLength: number) =>
  createParser({
    parse: (value: string) => {
      const text = cutText(value.trim(), maxLength);
      return text && isStorableText(text) ? text : null;
    },
    serialize: (value: string) => value,
  });
