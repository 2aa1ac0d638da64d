// GET /api/live – liveness: answers without touching anything (the benchmark's framework ceiling)
import { jsonText } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

export function GET(): Response {
  return jsonText('{"ok":true}');
}
