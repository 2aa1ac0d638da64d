import { env } from "@/lib/env";

// The name of the single sign-on button, or null when OpenID Connect is not set up (all three
// of OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are needed). Without it, a user without a
// password cannot sign in at all.
export function singleSignOnName(): string | null {
  const e = env();
  return e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET ? e.OIDC_NAME : null;
}
