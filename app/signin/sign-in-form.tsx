"use client";

import { signIn } from "next-auth/react";
import { useRouter, useSearchParams } from "next/navigation";
import { useState, type FormEvent } from "react";
import { safeCallbackUrl } from "@/lib/console/safe-callback-url";
import { SIGN_IN_LOCKED, SIGN_IN_UNAVAILABLE } from "@/lib/auth/sign-in-lock-code";

export function SignInForm({ sso }: { sso: string | null }) {
  const router = useRouter();
  const search = useSearchParams();
  const [error, setError] = useState<string | null>(search.get("error") ? "Sign-in failed. Try again." : null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const result = await signIn("credentials", { redirect: false, email: form.get("email"), password: form.get("password") });
    setBusy(false);
    if (!result || result.error) {
      setError(
        result?.error === SIGN_IN_LOCKED
          ? "Too many failed sign-ins for this email. Wait a few minutes, then try again."
          : result?.error === SIGN_IN_UNAVAILABLE
            ? "Sign-in is unavailable right now. Try again in a moment."
            : "Wrong email or password.",
      );
      return;
    }
    router.push(safeCallbackUrl(search.get("callbackUrl"), window.location.origin));
    router.refresh();
  }

  return (
    // method="post": a form sent before this script runs (a slow chunk, a password manager that
    // submits at once) is the browser's own submission, and a GET put the password in the URL,
    // the history and any proxy's access log. A POST sends it in the body, to this page, which
    // answers with the form again.
    <form onSubmit={onSubmit} method="post" className="stack" aria-label="Sign in">
      {error ? (
        <div className="error" role="alert">
          {error}
        </div>
      ) : null}
      <label>
        Email
        <input name="email" type="email" autoComplete="username" required autoFocus />
      </label>
      <label>
        Password
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      <button className="primary" type="submit" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      {sso ? (
        <button type="button" onClick={() => void signIn("oidc", { callbackUrl: safeCallbackUrl(search.get("callbackUrl"), window.location.origin) })}>
          Continue with {sso}
        </button>
      ) : null}
    </form>
  );
}
