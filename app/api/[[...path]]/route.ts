import { ProblemError } from "@/lib/http/problem";
import { withoutAuth } from "@/lib/http/with-api-key";

export const dynamic = "force-dynamic";

// Any other /api path: a problem+json 404 instead of Next's HTML page.
const notFound = withoutAuth("/api/*", async ({ req }) => {
  throw new ProblemError("not-found", `No route ${req.method} ${new URL(req.url).pathname}.`);
});

// OPTIONS too: Next.js's own answer was a 204 listing every method for a path that serves none.
export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE, notFound as OPTIONS };
