import { db } from "@/lib/db";
import { json } from "@/lib/http/respond";
import { ProblemError } from "@/lib/http/problem";
import { withoutAuth } from "@/lib/http/with-api-key";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/health – readiness: 200 only when the database answers
export const GET = withoutAuth("/api/health", async () => {
  try {
    await db().$queryRaw`SELECT 1`;
  } catch {
    throw new ProblemError("service-unavailable", "The database does not answer.");
  }
  return json({ ok: true, database: "up" });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/health", ["GET"]);
