import { Suspense } from "react";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { currentConsoleUser } from "@/lib/auth/console-user";
import { singleSignOnName } from "@/lib/auth/single-sign-on";
import { safeCallbackUrl } from "@/lib/console/safe-callback-url";
import { SignInForm } from "./sign-in-form";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Sign in" };

export const dynamic = "force-dynamic";

// GET /signin – the console's sign-in: email and password, or SSO when OIDC is configured.
// Someone already signed in goes where the sign-in would have sent them (a bookmarked /signin, a
// link with a callbackUrl, the back button after signing in) instead of a form that asks again
// (console review). To switch accounts, they sign out first.
export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  if (await currentConsoleUser()) {
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

// The origin the browser used, for callbackUrls next-auth writes as absolute URLs. Only a URL of
// this very origin is followed; a wrong guess (a proxy that rewrites Host) lands on "/", never elsewhere.
async function requestOrigin(): Promise<string> {
  const h = await headers();
  const host = h.get("x-forwarded-host") ?? h.get("host") ?? "localhost";
  const proto = h.get("x-forwarded-proto") === "https" ? "https" : "http";
  return `${proto}://${host}`;
}
