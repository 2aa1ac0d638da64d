import { ProblemError, problemResponse } from "@/lib/http/problem";
import { newRequestId } from "@/lib/http/request-context";

// next-auth (told to trust the host, lib/auth/auth-options.ts) takes the console's origin from
// X-Forwarded-Host, else Host, exactly as sent, unless NEXTAUTH_URL is set, and parses it with
// `new URL()` where nothing catches the error: a value that is not one host[:port] ("a:b", "", a
// list such as "a, b") made every console page, console API route and sign-in endpoint a 500.
// RFC 9112 §3.2 answers a Host with an invalid value with a 400, and so does Tollgate, for the
// forwarded host as well, in the proxy (proxy.ts), which sees every request that asks next-auth:
// console pages, the console API and /api/auth. The agent API never reads either header this way
// and is not refused.
export function unusableConsoleHost(headers: Headers): ProblemError | null {
  // With NEXTAUTH_URL set, next-auth takes its origin from it and never reads these headers.
  if (process.env.NEXTAUTH_URL) return null;
  const forwarded = headers.get("x-forwarded-host");
  const host = forwarded ?? headers.get("host");
  if (host === null || URL.canParse(`https://${host}`)) return null;
  const header = forwarded === null ? "Host" : "X-Forwarded-Host";
  return new ProblemError("invalid-request", `The ${header} header is not one host name (with an optional port); the console takes its address from it.`, {
    extras: { errors: [{ path: `headers.${header.toLowerCase()}`, message: "not a host[:port]" }] },
  });
}

export function unusableConsoleHostResponse(headers: Headers): Response | null {
  const problem = unusableConsoleHost(headers);
  return problem ? problemResponse(problem, { "x-request-id": newRequestId() }) : null;
}
