import { z } from "zod";
import { db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { getTool } from "@/lib/tools/get-tool";
import { putTool } from "@/lib/tools/put-tool";
import { toolDefinitionSchema, toolNameSchema } from "@/lib/tools/tool-schema";
import { otherMethods } from "@/lib/http/method-not-allowed";
import { parsePathName } from "@/lib/http/path-params";

export const dynamic = "force-dynamic";

// The definition is validated by the same schema as PUT /api/v1/tools/{name}, on its own, so
// the errors[] paths ("policy.backoff.capMs") are the API's and the form can show each at its field.
// seenUpdatedAt: the tool's updatedAt when the form opened (putTool refuses a save over a change made since).
const bodySchema = z.object({ definition: z.unknown(), reason: z.string().trim().max(2000).optional(), seenUpdatedAt: z.iso.datetime().optional() }).strict();

// PUT /api/console/{tenant}/tools/{name} – an admin edits a registered tool's description, annotations and policy
export const PUT = withConsoleUser<{ tenant: string; name: string }>(
  { route: "/api/console/{tenant}/tools/{name}", capability: "administer" },
  async ({ req, user, tenant, params, ctx }) => {
    const name = parsePathName(toolNameSchema, params.name);
    ctx.annotate({ tool: name });
    const body = bodySchema.parse(await readJson(req, { maxBytes: 64 * KiB }));
    const definition = toolDefinitionSchema.parse(body.definition);
    // The console edits tools; registering a new one is the API's job (agents' owners do it from code).
    if (!(await getTool({ db: db(), tenantId: tenant.id, name }))) throw new ProblemError("tool-not-found", "No tool of that name is registered for this tenant.");
    const { tool } = await putTool({ db: db(), tenantId: tenant.id, name, definition, actor: `user:${user.email}`, admin: { id: user.id }, reason: body.reason || null, seenUpdatedAt: body.seenUpdatedAt });
    return json(tool);
  },
);

export const { GET, POST, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/tools/{name}", ["PUT"]);
