import type { AuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { db } from "@/lib/db";
import { env } from "@/lib/env";
import { hmacBase64Url } from "@/lib/crypto/digest";
import { UNUSABLE_HASH, verifyPassword } from "@/lib/auth/password";
import { log } from "@/lib/log";
import { logDigest } from "@/lib/crypto/digest";
import { verifiedOidcEmail } from "@/lib/auth/verified-oidc-email";
import { endSession, newSessionId, sessionEndsAt } from "@/lib/auth/ended-sessions";
import { clearSignInFailures, SIGN_IN_LOCKED, takeSignInTry } from "@/lib/auth/sign-in-throttle";
import { SIGN_IN_UNAVAILABLE } from "@/lib/auth/sign-in-lock-code";
import { unstorableText } from "@/lib/http/json-limits";
import { safeCallbackUrl } from "@/lib/console/safe-callback-url";
import { nextAuthLogger } from "@/lib/auth/next-auth-logger";

let cached: AuthOptions | undefined;

// next-auth v4 with JWT sessions. The token carries only the user id and its session generation: role,
// memberships and "disabled" are read from the database on every request
// (lib/auth/console-user.ts), so a demotion or a disabled account takes effect at once rather
// than when the JWT expires, and a session from before a disable never works again.
export function authOptions(): AuthOptions {
  if (cached) return cached;
  const e = env();
  // next-auth derives its origin from the Host header only when told to trust it; Tollgate
  // is served directly (or behind a proxy that sets X-Forwarded-Host), so it does.
  process.env.AUTH_TRUST_HOST ??= "true";
  const providers: AuthOptions["providers"] = [
    CredentialsProvider({
      id: "credentials",
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(credentials) {
        try {
          return await checkCredentials(credentials);
        } catch (error) {
          if (error instanceof Error && error.message === SIGN_IN_LOCKED) throw error;
          // next-auth hands a thrown error's message to the browser in the URL: a database
          // error's text (server paths, the bundled code around the call) is only logged, by name.
          log().error({ err: { name: error instanceof Error ? error.name : typeof error, code: (error as { code?: unknown })?.code } }, "console sign-in failed");
          throw new Error(SIGN_IN_UNAVAILABLE);
        }
      },
    }),
  ];
  if (e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET) {
    providers.push({
      id: "oidc",
      name: e.OIDC_NAME,
      type: "oauth",
      wellKnown: `${e.OIDC_ISSUER.replace(/\/$/, "")}/.well-known/openid-configuration`,
      clientId: e.OIDC_CLIENT_ID,
      clientSecret: e.OIDC_CLIENT_SECRET,
      idToken: true,
      checks: ["pkce", "state"],
      authorization: { params: { scope: "openid email profile" } },
      profile: (profile: { sub: string; email?: string; name?: string }) => ({ id: profile.sub, email: profile.email ?? null, name: profile.name ?? null }),
    });
  }
  cached = {
    providers,
    secret: e.NEXTAUTH_SECRET ?? hmacBase64Url(e.TOLLGATE_SECRET_KEY, "tollgate-nextauth-v1"),
    session: { strategy: "jwt", maxAge: Math.round(e.TOLLGATE_SESSION_HOURS * 3600) },
    pages: { signIn: "/signin" },
    logger: nextAuthLogger,
    callbacks: {
      // Where next-auth sends a browser after signing in or out. Its default parsed any
      // callbackUrl with `new URL()` uncaught, on every action and from a cookie too: "?callbackUrl=x",
      // a JSON `"callbackUrl": 1` or a planted `next-auth.callback-url` cookie was a 500 on every
      // console request. Only a place on this console is followed, as on the sign-in page.
      redirect({ url, baseUrl }) {
        return `${baseUrl}${safeCallbackUrl(typeof url === "string" ? url : null, baseUrl)}`;
      },
      // SSO signs in only people an admin created, matched by an email the provider verified;
      // nobody is auto-provisioned.
      async signIn({ account, profile }) {
        if (account?.provider !== "oidc") return true;
        const email = verifiedOidcEmail(profile, { requireVerified: e.OIDC_REQUIRE_EMAIL_VERIFIED });
        const known = email ? await db().user.findUnique({ where: { email } }) : null;
        if (!known || known.disabledAt) log().warn({ emailDigest: logDigest(email ?? "") }, "console SSO sign-in refused");
        return Boolean(known && !known.disabledAt);
      },
      async jwt({ token, user, account, profile }) {
        // Each sign-in is a session of its own, so signing out ends that one (lib/auth/ended-sessions.ts).
        if (user) {
          token.sid = newSessionId();
          token.sat = Math.floor(Date.now() / 1000);
        }
        if (user && account?.provider === "oidc") {
          const email = verifiedOidcEmail(profile, { requireVerified: e.OIDC_REQUIRE_EMAIL_VERIFIED });
          const known = email ? await db().user.findUnique({ where: { email } }) : null;
          if (known) {
            token.uid = known.id;
            token.gen = known.sessionGeneration;
          }
        } else if (user) {
          token.uid = user.id;
          token.gen = (user as { sessionGeneration?: number }).sessionGeneration ?? 0;
        }
        return token;
      },
      async session({ session, token }) {
        return {
          ...session,
          uid: typeof token.uid === "string" ? token.uid : undefined,
          gen: typeof token.gen === "number" ? token.gen : 0,
          sid: typeof token.sid === "string" ? token.sid : undefined,
          sat: typeof token.sat === "number" ? token.sat : undefined,
        };
      },
    },
    events: {
      // next-auth clears the cookie; a copy of it (another tab's, a stolen one) must stop working too.
      async signOut({ token }) {
        if (typeof token?.sid === "string" && typeof token.uid === "string") {
          const ends = sessionEndsAt(typeof token.sat === "number" ? token.sat : undefined, e.TOLLGATE_SESSION_HOURS);
          await endSession({ db: db(), sid: token.sid, userId: token.uid, expiresAt: ends });
        }
      },
    },
  };
  return cached;
}

async function checkCredentials(credentials: Record<string, string> | undefined) {
  const email = String(credentials?.email ?? "").trim().toLowerCase();
  const password = String(credentials?.password ?? "");
  // Guessing is bounded per email (lib/auth/sign-in-throttle.ts); next-auth hands the
  // thrown message to the form as the error's code.
  const tried = await takeSignInTry(db(), email);
  if (!tried.allowed) {
    log().warn({ emailDigest: logDigest(email), lockedFor: tried.lockedForSeconds }, "console sign-in refused: too many failures");
    throw new Error(SIGN_IN_LOCKED);
  }
  // An email PostgreSQL cannot hold (U+0000, half a surrogate pair) belongs to no one.
  const user = email && !unstorableText.test(email) ? await db().user.findUnique({ where: { email } }) : null;
  // Always run scrypt, so an unknown email takes as long as a wrong password.
  const ok = await verifyPassword(password, user?.passwordHash ?? UNUSABLE_HASH);
  if (!user || !ok || user.disabledAt) {
    log().warn({ emailDigest: logDigest(email), failures: tried.failures, lockedFor: tried.lockedForSeconds }, "console sign-in refused");
    return null;
  }
  await clearSignInFailures(db(), email);
  return { id: user.id, email: user.email, name: user.name, sessionGeneration: user.sessionGeneration };
}
