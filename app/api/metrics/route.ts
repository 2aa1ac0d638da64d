import { metrics } from "@/lib/metrics/registry";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/metrics – Prometheus exposition of this instance's counters
export async function GET(): Promise<Response> {
  const { registry } = metrics();
  return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/metrics", ["GET"]);
