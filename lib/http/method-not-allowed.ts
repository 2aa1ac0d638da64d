import { ProblemError } from "@/lib/http/problem";
import { withoutAuth } from "@/lib/http/with-api-key";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

// Handlers for the methods a route does not serve: a problem+json 405 with an Allow header, as
// every other error. Next.js answers them itself with an empty 405 otherwise. A route exports
// them beside its own: `export const { PUT, PATCH, DELETE } = otherMethods(route, ["GET", "POST"]);`
// (test/api/methods.test.ts checks every route file does).
//
// OPTIONS is answered here too: Next.js's own answer lists every method the route file exports,
// and with these handlers exported that is all of them (an OPTIONS said DELETE was served where
// it is a 405). No CORS: the API is for servers and agents, and the console is same-origin.
export function otherMethods(route: string, allowed: readonly Method[]) {
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
  const refuse = withoutAuth(route, async ({ req }) => {
    throw new ProblemError("method-not-allowed", `${req.method} is not served here; this route serves ${allow}.`, { headers: { allow } });
  });
  // Through the same wrapper as every answer: a request id, a log line and a metric.
  const OPTIONS = withoutAuth(route, async () => new Response(null, { status: 204, headers: { allow } }));
  return { GET: refuse, POST: refuse, PUT: refuse, PATCH: refuse, DELETE: refuse, OPTIONS };
}
