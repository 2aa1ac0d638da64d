// The origin providers should call, as the caller reached us: a proxy's X-Forwarded-Proto/Host
// when present (the usual deployment), else the request's own URL.
export function requestOrigin(req: Request): string {
  const url = new URL(req.url);
  const host = req.headers.get("x-forwarded-host")?.split(",")[0]?.trim() || req.headers.get("host") || url.host;
  const proto = req.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || url.protocol.replace(/:$/, "");
  const origin = `${proto === "https" ? "https" : "http"}://${host}`;
  return URL.canParse(origin) ? origin : url.origin;
}
