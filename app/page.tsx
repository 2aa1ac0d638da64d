import Link from "next/link";
import { redirect } from "next/navigation";
import { currentConsoleUser } from "@/lib/auth/console-user";

export const dynamic = "force-dynamic";

// GET / – signed-in people go to their first tenant's overview; everyone else sees where things are.
export default async function Home() {
  const user = await currentConsoleUser();
  const first = user?.tenants[0];
  if (first) redirect(`/t/${first.slug}`);
  return (
    <main className="landing">
      <h1>Tollgate</h1>
      <p>
        The authority that makes AI-agent tool calls safe to retry: claim an operation under an Idempotency-Key, hold a fenced lease while you
        act, complete it; retries get the stored result, never a second effect.
      </p>
      {user ? <p className="notice">You are signed in as {user.email} but belong to no tenant yet. Ask an admin to add you.</p> : null}
      <ul>
        <li>
          Console: <Link href="/signin">sign in</Link>
        </li>
        <li>
          API: <code>/api/v1</code> — <Link href="/api/v1/openapi.json">OpenAPI 3.1</Link>
        </li>
        <li>
          Readiness: <Link href="/api/health">/api/health</Link> · liveness: <Link href="/api/live">/api/live</Link> · metrics:{" "}
          <Link href="/api/metrics">/api/metrics</Link>
        </li>
      </ul>
    </main>
  );
}
