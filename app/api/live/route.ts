// GET /api/live – liveness: answers without touching anything (the benchmark's framework ceiling)
export const dynamic = "force-dynamic";

export function GET(): Response {
  return new Response('{"ok":true}', { headers: { "content-type": "application/json" } });
}
