// What a person approves must be what they read. Characters that draw nothing or reorder what
// is drawn (U+202E RIGHT-TO-LEFT OVERRIDE shows "acct_\u202E9876" as acct_6789; U+200B, U+2028,
// the tag characters that smuggle text past a reader) are shown as \uXXXX escapes instead:
// Unicode categories Cf (format), Zl, Zp, and the controls (Cc) JSON.stringify leaves raw (DEL,
// C1). A newline is kept: outside a JSON string it is the pretty-printer's own layout.
// Applied to JSON text the escapes are JSON's own, so the text still parses to the same value;
// an astral character (a tag, U+E0041) becomes its two UTF-16 escapes, as JSON writes it.
const INVISIBLE = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const ANY_INVISIBLE = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

export function showInvisible(text: string): string {
  return text.replace(INVISIBLE, (ch) => {
    let out = "";
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")}`;
    return out;
  });
}

export function hasInvisible(text: string): boolean {
  return ANY_INVISIBLE.test(text);
}

// A JSON value as text with every such character escaped (pretty-printed when `indent` is given).
export function visibleJson(value: unknown, indent?: number): string {
  return showInvisible(JSON.stringify(value ?? null, null, indent) ?? "null");
}

// Whether a value's JSON text holds a character visibleJson escapes: the approval page warns.
export function jsonHasInvisible(value: unknown): boolean {
  return hasInvisible(JSON.stringify(value ?? null) ?? "");
}

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });

// The text in whole visible units: each grapheme with its invisible characters escaped, so a
// text cut at a unit never halves an escape, a surrogate pair or an emoji.
export function visibleUnits(text: string): string[] {
  return Array.from(segmenter.segment(text), (s) => showInvisible(s.segment));
}
