import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { listSavedViews, saveView } from "@/lib/console/saved-views";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/console/{tenant}/saved-views – the signed-in person's saved operations views in this tenant
export const GET = withConsoleUser<{ tenant: string }>({ route: "/api/console/{tenant}/saved-views", capability: "read" }, async ({ user, tenant }) => {
  const views = await listSavedViews({ db: db(), tenantId: tenant.id, userId: user.id });
  return json({ views });
});

// POST /api/console/{tenant}/saved-views – save the current filters under a name (the same name replaces them)
export const POST = withConsoleUser<{ tenant: string }>({ route: "/api/console/{tenant}/saved-views", capability: "read" }, async ({ req, user, tenant }) => {
  const input = await readJson(req, { maxBytes: 8 * KiB });
  const { view, replaced } = await saveView({ db: db(), tenantId: tenant.id, user, input: input as { name: string; query: string } });
  return json({ view, replaced }, replaced ? 200 : 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/saved-views", ["GET", "POST"]);
