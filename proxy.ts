import { NextResponse, type NextRequest } from "next/server";
import { undecodablePathResponse, undecodableSegment } from "@/lib/http/undecodable-path";
import { CONSOLE_PATH_HEADER } from "@/lib/auth/console-path";
import { unusableConsoleHostResponse } from "@/lib/auth/auth-host";
import { cookieHeaderWithout, expireCookies, unreadableCallbackCookies } from "@/lib/auth/unreadable-callback-url";

// Runs only for paths that contain a "%", and for the console (see the matcher): the agent API,
// the hot path included, never enters it. A path that does not decode gets a problem+json 400
// here, where Next.js would otherwise answer a plain-text 500 (lib/http/undecodable-path.ts); so
// does a console request with a Host or X-Forwarded-Host that is not a host name, which next-auth
// cannot parse (lib/auth/auth-host.ts). A callback-url cookie next-auth would refuse (a 500) is
// kept from it and expired (lib/auth/unreadable-callback-url.ts). A console page learns its own
// path and query (a server component is not told it), so a visitor without a session is sent to
// sign in and brought back to the very page (lib/auth/require-console.ts). Next.js reads the
// body of a request the proxy sees before the route does (up to 10 MB): console bodies are small,
// and any path with a "%" already took this way.
export function proxy(request: NextRequest): Response | undefined {
  const segment = undecodableSegment(request.nextUrl.pathname);
  if (segment !== null) return undecodablePathResponse(segment);
  const { pathname, search } = request.nextUrl;
  if (!CONSOLE.test(pathname)) return undefined;
  const badHost = unusableConsoleHostResponse(request.headers);
  if (badHost) return badHost;
  const page = pathname.startsWith("/t/");
  const stale = unreadableCallbackCookies(request);
  if (!page && stale.length === 0) return undefined;
  const headers = new Headers(request.headers);
  // Set here, whatever the client sent under this name.
  if (page) headers.set(CONSOLE_PATH_HEADER, pathname + search);
  if (stale.length > 0) headers.set("cookie", cookieHeaderWithout(request.headers.get("cookie") ?? "", stale));
  const response = NextResponse.next({ request: { headers } });
  expireCookies(response, stale);
  return response;
}

// Console pages, the console's API and next-auth's: what asks next-auth who is signed in.
const CONSOLE = /^\/(?:$|signin$|t\/|api\/auth\/|api\/console\/)/;

export const config = { matcher: ["/(.*%.*)", "/", "/signin", "/t/:path*", "/api/auth/:path*", "/api/console/:path*"] };
