import { ProblemError } from "@/lib/http/problem";
import { withoutAuth } from "@/lib/http/with-api-key";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

// Handlers for the methods a route does not serve: a problem+json 405 with an Allow header, as
// every other error. Next.js answers them itself with an empty 405 otherwise. A route exports
// them beside its own: `export const { PUT, PATCH, DELETE } = otherMethods(route, ["GET", "POST"]);`
// (test/api/methods.test.ts checks every route file does).
export function otherMethods(route: string, allowed: readonly Method[]) {
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : [])].join(", ");
  const refuse = withoutAuth(route, async ({ req }) => {
    throw new ProblemError("method-not-allowed", `${req.method} is not served here; this route serves ${allow}.`, { headers: { allow } });
  });
  return { GET: refuse, POST: refuse, PUT: refuse, PATCH: refuse, DELETE: refuse };
}
