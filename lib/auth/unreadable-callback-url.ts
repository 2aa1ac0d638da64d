import type { NextRequest, NextResponse } from "next/server";

// next-auth 4 checks a `callbackUrl` query parameter and its callback-url cookie before anything
// else, and one that is not an http(s) URL or a path ("x", "http://%") is its "configuration
// error": a 500 from every /api/auth endpoint, and from every console page and console API route
// for a browser holding such a cookie (a sibling subdomain can plant one). The same test as
// next-auth's (core/lib/assert.js), so what passes here passes there.
export function readableCallbackUrl(value: string): boolean {
  try {
    return /^https?:/.test(new URL(value, value.startsWith("/") ? "http://localhost" : undefined).protocol);
  } catch {
    return false;
  }
}

const COOKIES = ["next-auth.callback-url", "__Secure-next-auth.callback-url"];

// The callback-url cookies next-auth would refuse, by name.
export function unreadableCallbackCookies(request: NextRequest): string[] {
  return COOKIES.filter((name) => {
    const value = request.cookies.get(name)?.value;
    return value !== undefined && !readableCallbackUrl(value);
  });
}

// The Cookie header without those cookies: what next-auth is given instead (proxy.ts).
export function cookieHeaderWithout(header: string, names: string[]): string {
  // A cookie sent without "=" is a name alone (read as the value "true").
  const nameOf = (pair: string) => (pair.includes("=") ? pair.slice(0, pair.indexOf("=")) : pair).trim();
  return header
    .split(";")
    .filter((pair) => !names.includes(nameOf(pair)))
    .join(";");
}

// Asks the browser to drop them. One planted for a parent domain (Domain=) is not dropped by a
// host-only expiry: it is kept from next-auth again on every request that carries it.
export function expireCookies(response: NextResponse, names: string[]): void {
  for (const name of names) response.cookies.set(name, "", { path: "/", maxAge: 0, httpOnly: true, sameSite: "lax", secure: name.startsWith("__Secure-") });
}
