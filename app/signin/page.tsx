import { Suspense } from "react";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { currentConsoleUser } from "@/lib/auth/console-user";
import { singleSignOnName } from "@/lib/auth/single-sign-on";
import { safeCallbackUrl } from "@/lib/console/safe-callback-url";
import { forwardedOrigin } from "@/lib/http/request-origin";
import { SignInForm } from "./sign-in-form";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Sign in" };

export const dynamic = "force-dynamic";

// GET /signin – the console's sign-in: email and password, or SSO when OIDC is configured.
// Someone already signed in goes where the sign-in would have sent them (a bookmarked /signin, a
// link with a callbackUrl, the back button after signing in) instead of a form that asks again
// (console review). To switch accounts, they sign out first.
export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  if (await signedIn()) {
    const callbackUrl = (await searchParams).callbackUrl;
    redirect(safeCallbackUrl(typeof callbackUrl === "string" ? callbackUrl : null, await requestOrigin()));
  }
  const sso = singleSignOnName();
  return (
    <main className="narrow">
      <h1>Sign in to Tollgate</h1>
      <p className="muted">Operators review unknown outcomes, approvals and every attempt&apos;s trace here.</p>
      <Suspense>
        <SignInForm sso={sso} />
      </Suspense>
    </main>
  );
}

// Whether a session is there. The form is the page's fallback: with the database down (the
// session's person cannot be read) it is shown, and signing in says "unavailable", as before
// this check existed, rather than the page failing for everyone who still has a cookie.
async function signedIn(): Promise<boolean> {
  try {
    return Boolean(await currentConsoleUser());
  } catch {
    return false;
  }
}

// The origin the browser used, for callbackUrls next-auth writes as absolute URLs: NEXTAUTH_URL's
// when set (the README's advice behind a proxy), else the forwarded or Host header's
// (lib/http/request-origin.ts), normalised as a URL parser reads it ("EXAMPLE.com:443" under https
// is "https://example.com"). Only a URL of this origin is followed; a wrong guess lands on the
// path's own page or "/", never elsewhere (paths are resolved against this origin).
async function requestOrigin(): Promise<string> {
  return originOf(process.env.NEXTAUTH_URL) ?? originOf(forwardedOrigin(await headers(), new URL("http://localhost"))) ?? "http://localhost";
}

function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}
