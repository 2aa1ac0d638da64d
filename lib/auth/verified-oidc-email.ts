import { unstorableText } from "@/lib/http/json-limits";

// The email an OpenID Connect sign-in may be matched to a Tollgate user by: only one the identity
// provider says it verified (`email_verified`, a standard claim; some providers send the string
// "true"). Without the check, anyone who can register an unverified address at the provider
// (self-service sign-up) could sign in as the Tollgate user who owns it.
// `requireVerified: false` (OIDC_REQUIRE_EMAIL_VERIFIED=false) is for a provider that never sends
// the claim but issues only addresses it owns; an explicit `email_verified: false` is refused even then.
export function verifiedOidcEmail(profile: unknown, options: { requireVerified?: boolean } = {}): string | null {
  if (typeof profile !== "object" || profile === null) return null;
  const { email, email_verified: verified } = profile as { email?: unknown; email_verified?: unknown };
  // One PostgreSQL cannot hold (U+0000, half a surrogate pair) is no user's: looking it up failed
  // the sign-in with the database's error instead of refusing it.
  if (typeof email !== "string" || email.trim() === "" || unstorableText.test(email)) return null;
  const isVerified = verified === true || verified === "true";
  const saysUnverified = verified === false || verified === "false";
  if (options.requireVerified === false ? saysUnverified : !isVerified) return null;
  return email.trim().toLowerCase();
}
