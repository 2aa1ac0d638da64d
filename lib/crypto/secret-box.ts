import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { env } from "@/lib/env";

// Secrets Tollgate must be able to read back (webhook signing secrets, event-subscription secrets)
// are stored encrypted with AES-256-GCM under a key derived from TOLLGATE_SECRET_KEY.
// Box format: "v1.<iv>.<tag>.<ciphertext>", each part base64url. The version prefix lets a later
// key rotation or algorithm change tell old boxes apart.

const VERSION = "v1";

// Domain-separated derivation: the same server secret also keys downstream-key HMACs, and this
// keeps the two uses independent. A 32-character-plus secret hashed to 256 bits is the AES key.
function deriveKey(serverSecret: string): Buffer {
  return createHash("sha256").update("tollgate secret-box v1\0").update(serverSecret).digest();
}

let cachedKey: { secret: string; key: Buffer } | undefined;

function boxKey(serverSecret?: string): Buffer {
  const secret = serverSecret ?? env().TOLLGATE_SECRET_KEY;
  if (cachedKey?.secret !== secret) cachedKey = { secret, key: deriveKey(secret) };
  return cachedKey.key;
}

export function encryptSecret(plain: string, serverSecret?: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", boxKey(serverSecret), iv, { authTagLength: 16 });
  const ciphertext = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString("base64url"), tag.toString("base64url"), ciphertext.toString("base64url")].join(".");
}

// Throws when the box was not made with this server secret or was altered (GCM authenticates it).
export function decryptSecret(box: string, serverSecret?: string): string {
  const [version, iv, tag, ciphertext, ...rest] = box.split(".");
  if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
    throw new Error("Not a secret box");
  }
  // authTagLength pins the tag to 16 bytes: GCM would otherwise accept a truncated tag.
  const decipher = createDecipheriv("aes-256-gcm", boxKey(serverSecret), Buffer.from(iv, "base64url"), {
    authTagLength: 16,
  });
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
}
