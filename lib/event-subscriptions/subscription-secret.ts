import { randomBytes } from "node:crypto";

// A Standard Webhooks signing secret: "whsec_" and 32 random bytes in base64. Stored only
// encrypted (lib/crypto/secret-box), shown once, used by the worker to sign every delivery.
export function newSubscriptionSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
