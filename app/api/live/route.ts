// GET /api/live – liveness: answers without touching anything (the benchmark's framework ceiling)
import { jsonText } from "@/lib/http/respond";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export function GET(): Response {
  return jsonText('{"ok":true}');
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/live", ["GET"]);
