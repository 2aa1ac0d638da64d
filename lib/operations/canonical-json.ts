// Canonical JSON: object keys sorted by UTF-16 code units (integer-like keys too, which a JS
// object would otherwise put first), arrays in order, numbers and strings exactly as
// JSON.parse read them. Serialised directly rather than through a rebuilt object, so a key
// such as "__proto__" stays data. Two requests with the same meaning give the same text.
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Built by appending to one string, without the intermediate arrays of map/join, and with
// plain strings quoted directly: every claim and every complete serialises its arguments or
// report this way (the claim's fingerprint, the complete's digest).
export function canonicalJson(value: Json): string {
  if (typeof value === "string") return quote(value);
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + canonicalJson(value[i] as Json);
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${i === 0 ? "" : ","}${quote(key)}:${canonicalJson(value[key] as Json)}`;
  }
  return `${out}}`;
}

// Printable ASCII other than '"' and '\' is exactly what JSON.stringify leaves unescaped.
const plainAscii = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function quote(text: string): string {
  return plainAscii.test(text) ? `"${text}"` : JSON.stringify(text);
}

// A JSON value straight from JSON.parse: null, booleans, finite numbers, strings, arrays and plain objects.
export function isJson(value: unknown): value is Json {
  if (value === null || typeof value === "boolean" || typeof value === "string") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value) as unknown;
    return (proto === Object.prototype || proto === null) && Object.values(value as object).every(isJson);
  }
  return false;
}

export function isJsonObject(value: unknown): value is { [key: string]: Json } {
  return value !== null && typeof value === "object" && !Array.isArray(value) && isJson(value);
}
