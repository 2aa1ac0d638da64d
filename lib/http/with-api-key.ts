import { db } from "@/lib/db";
import { env } from "@/lib/env";
import { authenticateApiKey, type ApiKeyRole, type AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { ProblemError } from "@/lib/http/problem";
import { assertStorableParams, type PathParamCodes } from "@/lib/http/path-params";
import { handleRequest } from "@/lib/http/handle-errors";
import type { RequestContext } from "@/lib/http/request-context";

type HandlerArgs<P> = { req: Request; key: AuthenticatedKey; params: P; ctx: RequestContext };

const unauthorizedHeaders = { "www-authenticate": 'Bearer realm="tollgate"' };

// Authenticates the Bearer API key and enforces the route's roles. `hotPath` routes use the
// per-instance key cache; their SQL re-checks revocation itself, so the cache never lets a
// revoked key change anything. Other routes always ask the database. `params` says how each path
// parameter that cannot exist is answered (see assertStorableParams). `tenantWide` routes manage
// what acts on every tool's operations (webhook connections settle them, event subscriptions
// receive their results): a key limited to some tools would reach the others through them, so
// only a key without a tool list may use these routes.
export function withApiKey<P extends Record<string, string> = Record<string, never>>(
  options: { route: string; roles: readonly ApiKeyRole[]; hotPath?: boolean; params?: PathParamCodes; tenantWide?: boolean },
  handler: (args: HandlerArgs<P>) => Promise<Response>,
) {
  return (req: Request, routeContext: { params: Promise<P> }) =>
    handleRequest(req, options.route, async (ctx) => {
      const secret = bearerToken(req);
      const key = await authenticateApiKey({
        db: db(),
        secret,
        cacheSeconds: options.hotPath ? env().TOLLGATE_KEY_CACHE_SECONDS : 0,
      });
      if (!key) {
        throw new ProblemError("unauthorized", "The API key is unknown or revoked.", { headers: unauthorizedHeaders });
      }
      ctx.annotate({ tenantId: key.tenantId, apiKeyId: key.id, principal: key.principal });
      if (!options.roles.includes(key.role)) {
        throw new ProblemError("forbidden", `This route needs one of the roles: ${options.roles.join(", ")}; the key has "${key.role}".`);
      }
      if (options.tenantWide && key.tools.length > 0) {
        throw new ProblemError(
          "forbidden",
          "This key is limited to some tools, and what this route manages acts on every tool's operations of the tenant: use an admin key without a tool list.",
        );
      }
      const params = await routeContext.params;
      assertStorableParams(params, options.params);
      return handler({ req, key, params, ctx });
    });
}

function bearerToken(req: Request): string {
  const header = req.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) {
    throw new ProblemError("unauthorized", "Send the API key as `Authorization: Bearer <key>`.", { headers: unauthorizedHeaders });
  }
  return match[1];
}

// Routes without an API key (liveness, health, metrics, webhooks) still get ids, problem+json and a log line.
export function withoutAuth(route: string, handler: (args: { req: Request; ctx: RequestContext }) => Promise<Response>) {
  return (req: Request) => handleRequest(req, route, (ctx) => handler({ req, ctx }));
}
