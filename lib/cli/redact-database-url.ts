// A connection string as it may be printed: no password, neither in user:password@ (which may
// itself contain a raw "@") nor in a `password` query parameter, which pg honours too.
export function redactDatabaseUrl(url: string): string {
  if (!URL.canParse(url)) return "(unparseable DATABASE_URL)";
  const u = new URL(url);
  if (u.password) u.password = "***";
  if (u.searchParams.has("password")) u.searchParams.set("password", "***");
  return u.toString();
}
