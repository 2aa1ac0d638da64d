import { db } from "@/lib/db";
import { json } from "@/lib/http/respond";
import { ProblemError } from "@/lib/http/problem";
import { prismaDatabaseUnavailable } from "@/lib/db/database-unavailable";
import { withoutAuth } from "@/lib/http/with-api-key";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/health – readiness: 200 only when the database answers
export const GET = withoutAuth("/api/health", async () => {
  try {
    await db().$queryRaw`SELECT 1`;
  } catch (error) {
    // Retry-After as on every other 503: a load balancer or an agent polling readiness backs off alike.
    const problem = new ProblemError("service-unavailable", "The database does not answer.", { headers: { "retry-after": "1" } });
    // The log line's cause: the database's own code and words where Prisma's error has them.
    problem.cause = prismaDatabaseUnavailable(error)?.cause ?? error;
    throw problem;
  }
  return json({ ok: true, database: "up" });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/health", ["GET"]);
