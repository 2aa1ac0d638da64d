import { Suspense } from "react";
import { env } from "@/lib/env";
import { SignInForm } from "./sign-in-form";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Sign in" };

export const dynamic = "force-dynamic";

// GET /signin – the console's sign-in: email and password, or SSO when OIDC is configured
export default function SignInPage() {
  const e = env();
  const sso = e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET ? e.OIDC_NAME : null;
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
