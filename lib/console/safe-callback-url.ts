// Where the sign-in page sends a person once they are signed in. `callbackUrl` comes from the
// address bar, so anyone can hand out a /signin link; followed blindly, it sends someone who
// just signed in for real to a look-alike site (an open redirect). Only a place on this console
// is followed: a path ("/t/acme/audit?action=user."), or an absolute URL of this very origin
// (next-auth writes those); anything else lands on "/".
export function safeCallbackUrl(value: string | null, origin: string): string {
  if (!value) return "/";
  // "//evil.example" and "/\evil.example" are other hosts to a browser; checked as text first,
  // then as the browser reads it ("/\t/evil.example": it drops tabs and newlines).
  const isPath = value.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\");
  if (!isPath && !value.startsWith(`${origin}/`)) return "/";
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return "/";
  }
  if (url.origin !== origin) return "/";
  // The path as the URL parser normalised it, which is what gets pushed: dot segments can turn
  // "/.//evil.example" into "//evil.example", another host again. So the result is checked too.
  const target = `${url.pathname}${url.search}${url.hash}`;
  return target.startsWith("//") || target.startsWith("/\\") ? "/" : target;
}
