import { sha256Hex } from "@/lib/crypto/digest";
import { canonicalJson, type Json } from "@/lib/operations/canonical-json";

// Versioned so the recipe can change later without old keys suddenly "mismatching".
export const FINGERPRINT_VERSION = "v1";

export function fingerprint(tool: string, args: Json): string {
  return fingerprintOfCanonical(tool, canonicalJson(args));
}

// The same, from args already in canonical form (the claim needs that text anyway): the
// canonical JSON of {tool, args} is built around it, keys in order, without a second walk.
export function fingerprintOfCanonical(tool: string, canonicalArgs: string): string {
  return `${FINGERPRINT_VERSION}:${sha256Hex(`{"args":${canonicalArgs},"tool":${JSON.stringify(tool)}}`)}`;
}
