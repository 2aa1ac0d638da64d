import { NextResponse, type NextRequest } from "next/server";
import { undecodablePathResponse, undecodableSegment } from "@/lib/http/undecodable-path";
import { CONSOLE_PATH_HEADER } from "@/lib/auth/console-path";
import { unusableConsoleHostResponse } from "@/lib/auth/auth-host";

// Runs only for paths that contain a "%", and for console pages (see the matcher): the API, the
// hot path included, never enters it. A path that does not decode gets a problem+json 400 here,
// where Next.js would otherwise answer a plain-text 500 (lib/http/undecodable-path.ts); so does a
// console page asked with a Host or X-Forwarded-Host that is not a host name, which next-auth
// cannot parse (lib/auth/auth-host.ts). A console page learns its own path and query (a server
// component is not told it), so a visitor without a session is sent to sign in and brought back
// to the very page (lib/auth/require-console.ts).
export function proxy(request: NextRequest): Response | undefined {
  const segment = undecodableSegment(request.nextUrl.pathname);
  if (segment !== null) return undecodablePathResponse(segment);
  if (CONSOLE_PAGE.test(request.nextUrl.pathname)) {
    const badHost = unusableConsoleHostResponse(request.headers);
    if (badHost) return badHost;
  }
  if (!request.nextUrl.pathname.startsWith("/t/")) return undefined;
  // Set here, whatever the client sent under this name.
  const headers = new Headers(request.headers);
  headers.set(CONSOLE_PATH_HEADER, request.nextUrl.pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

const CONSOLE_PAGE = /^\/(?:$|t\/|signin$)/;

export const config = { matcher: ["/(.*%.*)", "/", "/signin", "/t/:path*"] };
