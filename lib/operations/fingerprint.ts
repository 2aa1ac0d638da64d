import { sha256Hex } from "@/lib/crypto/digest";
import { canonicalJson, type Json } from "@/lib/operations/canonical-json";

// Versioned so the recipe can change later without old keys suddenly "mismatching".
export const FINGERPRINT_VERSION = "v1";

export function fingerprint(tool: string, args: Json): string {
  return `${FINGERPRINT_VERSION}:${sha256Hex(`{"args":${canonicalJson(args)},"tool":${JSON.stringify(tool)}}`)}`;
}
