import { db } from "@/lib/db";
import { resolveBulkRequestSchema, resolveMany } from "@/lib/console/resolve-many";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// POST /api/console/{tenant}/operations/resolve-bulk – one outcome and reason for many operations, each compare-and-set
export const POST = withConsoleUser<{ tenant: string }>(
  { route: "/api/console/{tenant}/operations/resolve-bulk", capability: "resolve" },
  async ({ req, user, tenant, ctx }) => {
    // 128 KiB: 500 ids, each with the attempts and the flag the rows showed.
    const { operationIds, seenAttempts, seenFlags, ...input } = resolveBulkRequestSchema.parse(await readJson(req, { maxBytes: 128 * KiB }));
    ctx.annotate({ operations: operationIds.length });
    const result = await resolveMany({ db: db(), tenantId: tenant.id, operationIds, input, actor: `user:${user.email}`, seenAttempts, seenFlags });
    return json(result);
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/operations/resolve-bulk", ["POST"]);
