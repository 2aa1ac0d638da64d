// Bench-only route (see ../../route.ts): the same on a dynamic path, the shape of a complete.
export const dynamic = "force-dynamic";

export async function POST(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await ctx.params;
  const body = await req.arrayBuffer();
  return new Response(`{"ok":true,"id":"${id}","bytes":${body.byteLength}}`, { headers: { "content-type": "application/json" } });
}
