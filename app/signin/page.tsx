import { Suspense } from "react";
import { singleSignOnName } from "@/lib/auth/single-sign-on";
import { SignInForm } from "./sign-in-form";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Sign in" };

export const dynamic = "force-dynamic";

// GET /signin – the console's sign-in: email and password, or SSO when OIDC is configured
export default function SignInPage() {
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
