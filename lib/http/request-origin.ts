// The origin a caller reached us at: a proxy's X-Forwarded-Proto/Host when present (the usual
// deployment), else the Host header, else `fallback` (the request's own URL). Webhook connections
// give providers their endpoint under it; /signin checks callback URLs against it.
export function forwardedOrigin(headers: Headers, fallback: URL): string {
  const host = headers.get("x-forwarded-host")?.split(",")[0]?.trim() || headers.get("host") || fallback.host;
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || fallback.protocol.replace(/:$/, "");
  const origin = `${proto === "https" ? "https" : "http"}://${host}`;
  return URL.canParse(origin) ? origin : fallback.origin;
}

export function requestOrigin(req: Request): string {
  return forwardedOrigin(req.headers, new URL(req.url));
}
