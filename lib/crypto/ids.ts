import { randomBytes } from "node:crypto";

// Opaque, URL-safe, sortable-enough ids: a type prefix and 128 random bits.
export function newId(prefix: "ten" | "key" | "tool" | "op" | "att" | "usr" | "view" | "fx" | "sub"): string {
  return `${prefix}_${randomBytes(16).toString("base64url")}`;
}
