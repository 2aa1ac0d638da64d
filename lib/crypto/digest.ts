import { createHmac, hash, timingSafeEqual } from "node:crypto";

// One-shot hash: every hot-path request takes three of these, and crypto.hash skips the
// Hash object that createHash().update().digest() allocates (about half the cost).
export function sha256Hex(input: string | Buffer): string {
  return hash("sha256", input, "hex");
}

export function hmacBase64Url(secret: string, input: string): string {
  return createHmac("sha256", secret).update(input).digest("base64url");
}

// Constant-time equality of two hex/ASCII strings; unequal lengths compare as unequal without early exit on content.
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

// What logs and the console show instead of an Idempotency-Key: a prefix of its SHA-256.
export const LOG_DIGEST_LENGTH = 16;

export function logDigest(secretish: string): string {
  return sha256Hex(secretish).slice(0, LOG_DIGEST_LENGTH);
}
