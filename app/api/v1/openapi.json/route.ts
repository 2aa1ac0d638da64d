import { buildOpenApi } from "@/lib/openapi/build-openapi";
import { otherMethods } from "@/lib/http/method-not-allowed";

// GET /api/v1/openapi.json – the contract, generated from the request/response zod schemas
let cached: string | undefined;

export function GET(): Response {
  cached ??= JSON.stringify(buildOpenApi());
  return new Response(cached, { headers: { "content-type": "application/json" } });
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/openapi.json", ["GET"]);
