// Canonical JSON: object keys sorted (by UTF-16 code units, as JSON.stringify sees them),
// arrays in order, numbers and strings exactly as JSON.parse read them. Two requests with
// the same meaning produce the same text, whatever order their keys came in.
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function canonicalize(value: Json): Json {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const key of Object.keys(value).sort()) out[key] = canonicalize(value[key] as Json);
    return out;
  }
  return value;
}

export function canonicalJson(value: Json): string {
  return JSON.stringify(canonicalize(value));
}
