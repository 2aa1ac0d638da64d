// The email an OpenID Connect sign-in may be matched to a Tollgate user by: only one the identity
// provider says it verified (`email_verified`, a standard claim; some providers send the string
// "true"). Without the check, anyone who can register an unverified address at the provider
// (self-service sign-up) could sign in as the Tollgate user who owns it.
export function verifiedOidcEmail(profile: unknown): string | null {
  if (typeof profile !== "object" || profile === null) return null;
  const { email, email_verified: verified } = profile as { email?: unknown; email_verified?: unknown };
  if (typeof email !== "string" || email.trim() === "") return null;
  if (verified !== true && verified !== "true") return null;
  return email.trim().toLowerCase();
}
