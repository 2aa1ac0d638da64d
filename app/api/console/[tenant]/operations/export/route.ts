import { db } from "@/lib/db";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { loadOperationsQuery } from "@/lib/console/operations-query";
import { exportOperationsCsv } from "@/lib/console/export-operations-csv";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET /api/console/{tenant}/operations/export?<the table's query> – every matching operation as a streamed CSV download
export const GET = withConsoleUser<{ tenant: string }>(
  { route: "/api/console/{tenant}/operations/export", capability: "read" },
  async ({ req, tenant, ctx }) => {
    const query = loadOperationsQuery(new URL(req.url));
    ctx.annotate({ export: "operations" });
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
    return new Response(exportOperationsCsv({ db: db(), tenantId: tenant.id, query }), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="operations-${tenant.slug}-${stamp}.csv"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/operations/export", ["GET"]);
