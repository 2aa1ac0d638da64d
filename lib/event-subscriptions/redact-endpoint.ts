import { logDigest } from "@/lib/crypto/digest";
import type { SubscriptionView } from "@/lib/event-subscriptions/event-subscription-schemas";

// An endpoint URL is often a credential itself: Slack and Discord hook URLs carry their token in
// the path, others put one in the query or in user:password@. Only admins (who set it) see it
// whole; everyone else, and the audit log, see the scheme, host and first path segment.
export function redactEndpoint(url: string): string {
  if (!URL.canParse(url)) return "[redacted]";
  const u = new URL(url);
  const [first = "", ...rest] = u.pathname.slice(1).split("/");
  const hidden = rest.length > 0 || u.search !== "" || u.hash !== "" || u.username !== "" || u.password !== "";
  return `${u.protocol}//${u.host}/${first}${hidden ? (first ? "/…" : "…") : ""}`;
}

// What the audit log keeps of a subscription: the redacted endpoint, and a digest of the whole
// URL so that a change of endpoint still shows as a change.
export function auditedSubscription(view: SubscriptionView): Record<string, unknown> {
  return { ...view, url: redactEndpoint(view.url), urlDigest: logDigest(view.url) };
}
