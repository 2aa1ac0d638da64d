import { db } from "@/lib/db";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import { listTools } from "@/lib/tools/get-tool";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/v1/tools – the tenant's tools with their annotations and policies
export const GET = withApiKey({ route: "/api/v1/tools", roles: ["admin"] }, async ({ key }) => {
  // A key limited to some tools sees only those (the others do not exist for it, as for another tenant's).
  const tools = await listTools({ db: db(), tenantId: key.tenantId });
  return json({ tools: key.tools.length > 0 ? tools.filter((t) => key.tools.includes(t.name)) : tools });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/tools", ["GET"]);
