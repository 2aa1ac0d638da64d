import { logDigest } from "@/lib/crypto/digest";
import type { SubscriptionView } from "@/lib/event-subscriptions/event-subscription-schemas";

// An endpoint URL is often a credential itself: Slack and Discord hook URLs carry their token in
// the path, webhook.site and others make the first segment the token, others put one in the
// query or in user:password@. Only admins (who set it) see it whole; everyone else, and the audit
// log, see the scheme, the host, and the first path segment when it reads as a word ("services",
// "api", "hooks": letters, "-" and "_" only), never anything after it.
const WORD = /^[A-Za-z][A-Za-z_-]{0,23}$/;

export function redactEndpoint(url: string): string {
  if (!URL.canParse(url)) return "[redacted]";
  const u = new URL(url);
  const path = u.pathname.slice(1);
  const [first = ""] = path.split("/");
  const shown = WORD.test(first) ? first : "";
  const hidden = path !== shown || u.search !== "" || u.hash !== "" || u.username !== "" || u.password !== "";
  return `${u.protocol}//${u.host}/${shown}${hidden ? (shown ? "/…" : "…") : ""}`;
}

// What the audit log keeps of a subscription: the redacted endpoint, and a digest of the whole
// URL so that a change of endpoint still shows as a change.
export function auditedSubscription(view: SubscriptionView): Record<string, unknown> {
  return { ...view, url: redactEndpoint(view.url), urlDigest: logDigest(view.url) };
}
