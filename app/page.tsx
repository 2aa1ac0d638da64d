import Link from "next/link";

// The landing page: where the API lives. The operator console arrives with its own issue.
export default function Home() {
  return (
    <main>
      <h1>Tollgate</h1>
      <p>The authority that makes AI-agent tool calls safe to retry: claim an operation under an Idempotency-Key, hold a fenced lease while you act, complete it; retries get the stored result, never a second effect.</p>
      <ul>
        <li>API: <code>/api/v1</code> — <a href="/api/v1/openapi.json">OpenAPI 3.1</a></li>
        <li>Readiness: <Link href="/api/health">/api/health</Link> · liveness: <Link href="/api/live">/api/live</Link> · metrics: <Link href="/api/metrics">/api/metrics</Link></li>
      </ul>
    </main>
  );
}
