// Bench-only route (copied into app/api/bench-framework-ceiling/ for one separate build by
// `npm run bench -- paired --framework`; never part of the product): a POST on a static path that
// reads its JSON body and answers, touching nothing. What Next.js itself costs for a claim's shape.
export const dynamic = "force-dynamic";

export async function POST(req: Request): Promise<Response> {
  const body = await req.arrayBuffer();
  return new Response(`{"ok":true,"bytes":${body.byteLength}}`, { headers: { "content-type": "application/json" } });
}
