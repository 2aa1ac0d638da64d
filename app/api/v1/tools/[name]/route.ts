import { db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withApiKey } from "@/lib/http/with-api-key";
import type { AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { getTool } from "@/lib/tools/get-tool";
import { putTool } from "@/lib/tools/put-tool";
import { toolDefinitionSchema, toolNameSchema } from "@/lib/tools/tool-schema";
import { otherMethods } from "@/lib/http/method-not-allowed";
import { parsePathName } from "@/lib/http/path-params";

export const dynamic = "force-dynamic";

const route = "/api/v1/tools/{name}";

// PUT /api/v1/tools/{name} – create (201) or replace (200) a tool; defaults filled in and returned
export const PUT = withApiKey<{ name: string }>({ route, roles: ["admin"], params: { name: null } }, async ({ req, key, params, ctx }) => {
  const name = parsePathName(toolNameSchema, params.name);
  assertKeyMayUse(key, name);
  ctx.annotate({ tool: name });
  const definition = toolDefinitionSchema.parse(await readJson(req, { maxBytes: 64 * KiB }));
  const { created, tool } = await putTool({ db: db(), tenantId: key.tenantId, name, definition, actor: `api-key:${key.id}`, mayLiftApproval: false });
  return json(tool, created ? 201 : 200, created ? { location: `/api/v1/tools/${name}` } : {});
});

// GET /api/v1/tools/{name} – one tool of the key's tenant
export const GET = withApiKey<{ name: string }>({ route, roles: ["admin"], params: { name: null } }, async ({ key, params }) => {
  const name = parsePathName(toolNameSchema, params.name);
  assertKeyMayUse(key, name);
  const tool = await getTool({ db: db(), tenantId: key.tenantId, name });
  if (!tool) throw new ProblemError("tool-not-found", "No tool of that name is registered for this tenant.");
  return json(tool);
});

// An admin key limited to some tools may neither read nor define the others: they do not exist
// for it (404, as for another tenant's), or it could lift another tool's approval gate.
function assertKeyMayUse(key: AuthenticatedKey, name: string): void {
  if (key.tools.length > 0 && !key.tools.includes(name)) {
    throw new ProblemError("tool-not-found", "No tool of that name is registered for this tenant (for this key's tools).");
  }
}

export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("/api/v1/tools/{name}", ["GET", "PUT"]);
