import { db } from "@/lib/db";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { deleteSavedView } from "@/lib/console/saved-views";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// DELETE /api/console/{tenant}/saved-views/{id} – delete one of your own saved views
export const DELETE = withConsoleUser<{ tenant: string; id: string }>(
  { route: "/api/console/{tenant}/saved-views/{id}", capability: "read" },
  async ({ user, tenant, params }) => {
    await deleteSavedView({ db: db(), tenantId: tenant.id, user, id: params.id });
    return new Response(null, { status: 204 });
  },
);

export const { GET, POST, PUT, PATCH, OPTIONS } = otherMethods("/api/console/{tenant}/saved-views/{id}", ["DELETE"]);
