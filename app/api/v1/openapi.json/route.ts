import { buildOpenApi } from "@/lib/openapi/build-openapi";

// GET /api/v1/openapi.json – the contract, generated from the request/response zod schemas
let cached: string | undefined;

export function GET(): Response {
  cached ??= JSON.stringify(buildOpenApi());
  return new Response(cached, { headers: { "content-type": "application/json" } });
}
