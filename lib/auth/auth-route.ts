import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { authOptions } from "@/lib/auth/auth-options";
import { unusableConsoleHost } from "@/lib/auth/auth-host";
import { unreadableAuthBody } from "@/lib/auth/unreadable-auth-body";
import { handleRequest } from "@/lib/http/handle-errors";
import { ProblemError, problemResponse, type ProblemCode } from "@/lib/http/problem";

// GET/POST /api/auth/* through next-auth 4, with what it answers badly answered here instead, as
// every other route answers (problem+json, a request id, a log line and a metric):
// - an action it does not serve ("/api/auth/foo") was a text/plain 400: 404 here;
// - a GET of the credentials callback (it takes a POST) was a text/plain 500: 405 here;
// - `_log`, its browser logger's endpoint, which the console does not use: 404, so nobody can
//   post to it at all;
// - a refusal of its own without a problem body (POST /api/auth/session without its CSRF token
//   was a 400 whose body read "[object Object]"): the same status as problem+json.
// Its JSON answers (the session, the CSRF token, a sign-in's `{ url }`, a failed sign-in's 401
// included) and its redirects are left exactly as next-auth gives them: the console reads them.
type Method = "GET" | "POST";

const ACTIONS: Record<string, readonly Method[]> = {
  providers: ["GET"],
  csrf: ["GET"],
  session: ["GET", "POST"],
  signin: ["GET", "POST"],
  signout: ["GET", "POST"],
  callback: ["GET", "POST"],
  error: ["GET"],
  "verify-request": ["GET"],
};

const ROUTE = "/api/auth/*";

export async function authRoute(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }): Promise<Response> {
  return handleRequest(req, ROUTE, async () => {
    const badHost = unusableConsoleHost(req.headers);
    if (badHost) throw badHost;
    const [action = "", provider] = (await ctx.params).nextauth ?? [];
    const methods = Object.hasOwn(ACTIONS, action) ? ACTIONS[action]! : null;
    if (!methods) throw new ProblemError("not-found", "No such sign-in endpoint.");
    // Next.js answers a HEAD with the GET handler.
    const method = req.method === "HEAD" ? "GET" : req.method;
    if (!methods.includes(method as Method)) throw notAllowed(req.method, methods);
    if (action === "callback") {
      const type = authOptions().providers.find((p) => p.id === provider)?.type;
      if (!type) throw new ProblemError("not-found", "No such sign-in provider.");
      // An email and password arrive only in a POST; next-auth answered a GET with a 500.
      if (type === "credentials" && method !== "POST") throw notAllowed(req.method, ["POST"]);
    }
    const unreadable = await unreadableAuthBody(req);
    if (unreadable) return unreadable;
    // next-auth serves no HEAD (a 400): it is answered as the GET, and Next.js sends no body.
    const asked = req.method === "HEAD" ? new NextRequest(req.url, { method: "GET", headers: req.headers }) : req;
    return asProblem(await NextAuth(authOptions())(asked, ctx), action);
  });
}

function notAllowed(method: string, allowed: readonly Method[]): ProblemError {
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
  return new ProblemError("method-not-allowed", `${method} is not served here; this endpoint serves ${allow}.`, { headers: { allow } });
}

const BY_STATUS: Record<number, ProblemCode> = { 400: "invalid-request", 401: "unauthorized", 403: "forbidden", 404: "not-found", 405: "method-not-allowed" };

function asProblem(response: Response, action: string): Response {
  if (response.status < 400) return response;
  const type = response.headers.get("content-type") ?? "";
  if (response.status < 500 && type.includes("application/json")) return response;
  const code = BY_STATUS[response.status] ?? (response.status >= 500 ? "internal-error" : "invalid-request");
  const detail =
    code === "internal-error"
      ? "Something went wrong on our side. Quote the X-Request-Id when reporting it."
      : action === "session" || action === "signout" || action === "signin"
        ? "The sign-in service refused the request: its CSRF token is missing or does not match (GET /api/auth/csrf gives one)."
        : "The sign-in service refused the request.";
  const answer = problemResponse(new ProblemError(code, detail));
  // The cookies next-auth set with its refusal (a fresh CSRF cookie) still belong to the client.
  for (const cookie of response.headers.getSetCookie()) answer.headers.append("set-cookie", cookie);
  return answer;
}
