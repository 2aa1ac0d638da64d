import { hmacBase64Url } from "@/lib/crypto/digest";

// The key a tool executor passes to its provider. Derived with the server secret from the
// operation's identity, so it is stable across attempts and takeovers, unguessable, and
// never the caller's raw Idempotency-Key. Side effects derive their own from it and a name.
export function downstreamKey(options: { secret: string; tenantId: string; operationId: string; effect?: string }): string {
  const subject = ["tollgate-downstream-v1", options.tenantId, options.operationId, options.effect ?? ""].join("\u0000");
  return `dk_${hmacBase64Url(options.secret, subject).slice(0, 32)}`;
}
