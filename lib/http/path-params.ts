import type { z } from "zod";
import { unstorableText } from "@/lib/http/json-limits";
import { ProblemError, type ProblemCode } from "@/lib/http/problem";

// How a route answers a path parameter PostgreSQL cannot store: the code of its own 404 (an id
// such a value cannot name), or null when the route validates that parameter itself (a name it
// checks against a pattern, answering 400 like any bad name). Unlisted parameters answer the
// generic "not-found".
export type PathParamCodes = Record<string, ProblemCode | null>;

// Next.js hands route handlers their path parameters decoded: `/operations/a%00b` arrives as
// "a\u0000b", which PostgreSQL refuses in a text parameter (a 500). Checked before any query.
// A route without parameters gets no params object at all.
export function assertStorableParams(params: Record<string, string | string[]> | undefined, codes: PathParamCodes = {}): void {
  for (const [name, value] of Object.entries(params ?? {})) {
    const code = name in codes ? codes[name] : "not-found";
    if (code === null) continue;
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => unstorableText.test(v))) {
      throw new ProblemError(code ?? "not-found", "Nothing exists at this path: a path segment holds U+0000 or half of a surrogate pair.");
    }
  }
}

// A name in the path (a tool's, a connection's, a side effect's), checked against its schema: a
// bad one is a 400 reported at the path "name", as a bad field of a body is at its own path.
export function parsePathName(schema: z.ZodType<string>, raw: string): string {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues[0]?.message ?? "invalid";
  throw new ProblemError("invalid-request", `name: ${message}`, { extras: { errors: [{ path: "name", message }] } });
}
