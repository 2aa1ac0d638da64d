// Bench-only route (see ../echo/route.ts): the static POST of a claim's shape plus one `SELECT 1`
// on the server's hot connection (lib/db/hot-sql.ts), the way a claim sends its one statement.
// Between this and the plain echo is what one database round trip costs a request; between this
// and a claim, the claim statement's own work and Tollgate's code.
import { db } from "@/lib/db";
import { hotQuery } from "@/lib/db/hot-sql";

export const dynamic = "force-dynamic";

const PING = { name: "bench_framework_ping", text: "SELECT 1 AS one" };

export async function POST(req: Request): Promise<Response> {
  const body = await req.arrayBuffer();
  const [row] = await hotQuery<{ one: number }>(db(), PING, []);
  return new Response(`{"ok":true,"bytes":${body.byteLength},"one":${row?.one ?? 0}}`, { headers: { "content-type": "application/json" } });
}
