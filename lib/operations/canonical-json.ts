// Canonical JSON: object keys sorted by UTF-16 code units (integer-like keys too, which a JS
// object would otherwise put first), arrays in order, numbers and strings exactly as
// JSON.parse read them. Serialised directly rather than through a rebuilt object, so a key
// such as "__proto__" stays data. Two requests with the same meaning give the same text.
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function canonicalJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as Json)}`).join(",")}}`;
  }
  return JSON.stringify(value);
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
