import { unstorableText as unstorable } from "@/lib/http/json-limits";

// PostgreSQL's jsonb cannot hold U+0000 nor half of a surrogate pair; a verified payload that
// contains one is refused with a 400 rather than failing in the database (a 500). The payload's
// depth is bounded first (ingest-webhook.ts), so this walk cannot overflow the stack.

export function isStorableJson(value: unknown): boolean {
  if (typeof value === "string") return !unstorable.test(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).every(([key, item]) => !unstorable.test(key) && isStorableJson(item));
  }
  return true;
}
