import { unstorableText } from "@/lib/http/json-limits";
import { ProblemError, type ProblemCode } from "@/lib/http/problem";

// Next.js hands route handlers their path parameters decoded: `/operations/a%00b` arrives as
// "a\u0000b", which PostgreSQL refuses in a text parameter (a 500). Such a value names nothing
// that exists, so it is the route's own 404, before any query.
// A route without parameters gets no params object at all.
export function assertStorableParams(params: Record<string, string | string[]> | undefined, notFound: ProblemCode): void {
  for (const value of Object.values(params ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => unstorableText.test(v))) {
      throw new ProblemError(notFound, "Nothing exists at this path: a path segment holds U+0000 or half of a surrogate pair.");
    }
  }
}
