import { randomBytes } from "node:crypto";
import { sha256Hex } from "@/lib/crypto/digest";

// "tgk_" + 256 random bits. Only the SHA-256 is stored; the prefix helps people tell keys apart.
export function newApiKeySecret(): { secret: string; hash: string; prefix: string } {
  const secret = `tgk_${randomBytes(32).toString("base64url")}`;
  return { secret, hash: sha256Hex(secret), prefix: secret.slice(0, 12) };
}

export function hashApiKeySecret(secret: string): string {
  return sha256Hex(secret);
}
