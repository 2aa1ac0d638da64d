// Limits every JSON body Tollgate parses (API requests, webhook payloads) is held to, so that
// what was accepted can be walked, canonicalized and stored without failing later (a 500).

// Deeper than any tool's arguments or result needs; the code that walks JSON (canonical form,
// fingerprints, diff paths) recurses, and a 10 KB body of nested brackets would otherwise
// exhaust the stack.
export const MAX_JSON_DEPTH = 128;

// True when the JSON text nests arrays and objects deeper than `max`. A scan of the text
// (brackets outside strings), not a walk of the parsed value: it cannot overflow the stack.
// Called on every request body after JSON.parse accepted it: valid JSON deeper than `max` has
// more than `max` opening and as many closing brackets, so shorter texts (a claim's few hundred
// bytes) are not scanned at all.
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  if (text.length <= 2 * max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

// PostgreSQL text and jsonb cannot hold U+0000 nor half of a surrogate pair.
export const unstorableText = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// True when the JSON text writes, as a \u escape, U+0000 or half a surrogate pair anywhere: jsonb
// refuses it even in a value a repeated key replaces ({"a":"\u0000","a":"ok"}), which JSON.parse
// drops, so a check of the parsed value alone let such a body reach PostgreSQL (a 500). Raw
// characters cannot be either: the text was decoded as strict UTF-8, and JSON.parse accepted it.
export function jsonTextHasUnstorableEscape(text: string): boolean {
  if (!text.includes("\\u")) return false;
  let highPending = false; // the last escape was a high surrogate: only a low one may come next
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== 0x5c) {
      if (highPending) return true;
      continue;
    }
    if (text[i + 1] !== "u") {
      if (highPending) return true;
      i++; // an escaped quote, backslash, or control letter
      continue;
    }
    const unit = Number.parseInt(text.slice(i + 2, i + 6), 16);
    i += 5;
    const low = unit >= 0xdc00 && unit <= 0xdfff;
    if (highPending) {
      if (!low) return true;
      highPending = false;
    } else if (unit === 0 || low) return true;
    else highPending = unit >= 0xd800 && unit <= 0xdbff;
  }
  return highPending;
}
