import { currentConsoleUser, type ConsoleUser } from "@/lib/auth/console-user";
import { can, type Capability } from "@/lib/auth/roles";
import { ProblemError } from "@/lib/http/problem";
import { handleRequest } from "@/lib/http/handle-errors";
import { assertStorableParams } from "@/lib/http/path-params";
import type { RequestContext } from "@/lib/http/request-context";
import { requestOrigin } from "@/lib/http/request-origin";

export type ConsoleTenant = ConsoleUser["tenants"][number];

type Args<P> = { req: Request; user: ConsoleUser; tenant: ConsoleTenant; params: P; ctx: RequestContext };

// Console route handlers under /api/console/{tenant}/…: a signed-in session, membership of
// the tenant (else 404, as if it did not exist), and the capability the action needs (else
// 403). Mutations must come from our own pages: the Origin header must name this origin, on
// top of next-auth's SameSite=Lax session cookie.
export function withConsoleUser<P extends { tenant: string }>(
  options: { route: string; capability: Capability },
  handler: (args: Args<P>) => Promise<Response>,
) {
  return (req: Request, routeContext: { params: Promise<P> }) =>
    handleRequest(req, options.route, async (ctx) => {
      if (req.method !== "GET" && req.method !== "HEAD") assertSameOrigin(req);
      const user = await currentConsoleUser();
      if (!user) throw new ProblemError("unauthorized", "Sign in to the console first.");
      ctx.annotate({ userId: user.id });
      const params = await routeContext.params;
      assertStorableParams(params);
      const tenant = user.tenants.find((t) => t.slug === params.tenant);
      if (!tenant) throw new ProblemError("not-found", "No such tenant.");
      ctx.annotate({ tenantId: tenant.id });
      if (!can(user.role, options.capability)) {
        throw new ProblemError("forbidden", `Your role (${user.role}) may not do this; it needs "${options.capability}".`);
      }
      return handler({ req, user, tenant, params, ctx });
    });
}

// With NEXTAUTH_URL set (the README's advice behind a proxy) the Origin must be its origin,
// scheme included: a page served over plain http on the console's own host (anyone who can
// answer on that network path can serve one) is another origin, though browsers that do not tell
// schemes apart send it the session cookie. Without it the server cannot know its own scheme (a
// TLS proxy that sends no X-Forwarded-Proto looks like plain http, and the request's own
// scheme would refuse every change), so the Origin's host must be the forwarded or Host header's.
// Both as a URL parser writes them: "Console.Example:443" under https is console.example.
function assertSameOrigin(req: Request): void {
  const origin = req.headers.get("origin");
  // "null" (sandboxed frames, some redirects) and other non-URLs are refused like foreign origins.
  const sent = origin && URL.canParse(origin) ? new URL(origin) : null;
  const configured = process.env.NEXTAUTH_URL && URL.canParse(process.env.NEXTAUTH_URL) ? new URL(process.env.NEXTAUTH_URL).origin : null;
  const same = !sent ? false : configured ? sent.origin === configured : sent.host === new URL(`${sent.protocol}//${requestHost(req)}`).host;
  if (!same) {
    throw new ProblemError("forbidden", "Cross-site request refused: console changes must come from the console itself.");
  }
}

// The host the caller reached, as lib/http/request-origin.ts reads it.
function requestHost(req: Request): string {
  return new URL(requestOrigin(req)).host;
}
