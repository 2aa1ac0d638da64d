import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { authOptions } from "@/lib/auth/auth-options";
import { unreadableAuthBody } from "@/lib/auth/unreadable-auth-body";
import { readableCallbackUrl } from "@/lib/auth/unreadable-callback-url";
import { handleRequest } from "@/lib/http/handle-errors";
import { ProblemError, problemResponse, type ProblemCode } from "@/lib/http/problem";

// GET/POST /api/auth/* through next-auth 4, with what it answers badly answered here instead, as
// every other route answers (problem+json, a request id, a log line and a metric):
// - an action it does not serve ("/api/auth/foo") was a text/plain 400: 404 here;
// - a GET of the credentials callback (it takes a POST) was a text/plain 500: 405 here;
// - `_log`, where next-auth's browser client reports its own errors, is a 404: with no server
//   logger configured next-auth only answered it, and nobody else may write to the logs;
// - a `callbackUrl` query parameter it cannot read (a 500, its "configuration error"): a 400;
// - a refusal without a body of its own (POST /api/auth/session without its CSRF token was a 400
//   whose body read "[object Object]"): the same status as problem+json;
// - HEAD, which it refused with a 400, is answered as the GET, but for a callback, whose GET
//   completes an SSO sign-in: that is a 405.
// Its JSON answers (the session, the CSRF token, a sign-in's `{ url }`, a failed sign-in's 401
// included), its HTML pages (an SSO sign-in refused: "Access Denied") and its redirects are left
// exactly as next-auth gives them: the console and people read them.
type Method = "GET" | "POST";

const ACTIONS: Record<string, readonly Method[]> = {
  providers: ["GET"],
  csrf: ["GET"],
  session: ["GET", "POST"],
  signin: ["GET", "POST"],
  signout: ["GET", "POST"],
  error: ["GET"],
  "verify-request": ["GET"],
};

const ROUTE = "/api/auth/*";

export async function authRoute(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }): Promise<Response> {
  return handleRequest(req, ROUTE, async () => {
    // next-auth takes one it cannot read for its own misconfiguration: a 500.
    if (new URL(req.url).searchParams.getAll("callbackUrl").some((url) => url !== "" && !readableCallbackUrl(url))) {
      throw new ProblemError("invalid-request", "callbackUrl must be a path on this console or an http(s) URL.", {
        extras: { errors: [{ path: "query.callbackUrl", message: "not a path or an http(s) URL" }] },
      });
    }
    const [action = "", provider] = (await ctx.params).nextauth ?? [];
    const endpoint = served(action, provider);
    if (!endpoint) throw new ProblemError("not-found", "No such sign-in endpoint.");
    // Next.js hands a HEAD to the GET handler.
    const headAsGet = req.method === "HEAD" && endpoint.head;
    if (!endpoint.methods.includes((headAsGet ? "GET" : req.method) as Method)) throw notAllowed(req.method, endpoint);
    const unreadable = await unreadableAuthBody(req);
    if (unreadable) return unreadable;
    // next-auth serves no HEAD (a 400): it is asked the GET, and Next.js sends no body.
    const asked = headAsGet ? new NextRequest(req.url, { method: "GET", headers: req.headers }) : req;
    return asProblem(await NextAuth(authOptions())(asked, ctx), action);
  });
}

type Endpoint = { methods: readonly Method[]; head: boolean };

function served(action: string, provider: string | undefined): Endpoint | null {
  if (action === "callback") {
    const type = authOptions().providers.find((p) => p.id === provider)?.type;
    if (!type) return null;
    // An email and password arrive only in a POST (next-auth answered a GET with a 500). An SSO
    // callback's GET completes the sign-in, so it has no HEAD.
    return { methods: type === "credentials" ? ["POST"] : ["GET", "POST"], head: false };
  }
  return Object.hasOwn(ACTIONS, action) ? { methods: ACTIONS[action]!, head: true } : null;
}

function notAllowed(method: string, { methods, head }: Endpoint): ProblemError {
  const allow = [...methods, ...(head && methods.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
  return new ProblemError("method-not-allowed", `${method} is not served here; this endpoint serves ${allow}.`, { headers: { allow } });
}

const BY_STATUS: Record<number, ProblemCode> = { 400: "invalid-request", 401: "unauthorized", 403: "forbidden", 404: "not-found", 405: "method-not-allowed" };

function asProblem(response: Response, action: string): Response {
  if (response.status < 400) return response;
  const type = response.headers.get("content-type") ?? "";
  // Its error page names the error in its query: "?error=Configuration" renders "Server error"
  // with a 500 for anyone who asks. The failure it reports was answered (and logged) where it
  // happened; showing the page is not one.
  if (action === "error" && type.includes("text/html") && response.status >= 500) {
    return new Response(response.body, { status: 200, headers: response.headers });
  }
  if (type.includes("text/html") || (response.status < 500 && type.includes("application/json"))) return response;
  const code = BY_STATUS[response.status] ?? (response.status >= 500 ? "internal-error" : "invalid-request");
  const detail =
    code === "internal-error"
      ? "Something went wrong on our side. Quote the X-Request-Id when reporting it."
      : action === "session"
        ? "The sign-in service refused the request: its CSRF token is missing or does not match (GET /api/auth/csrf gives one)."
        : "The sign-in service refused the request.";
  const answer = problemResponse(new ProblemError(code, detail));
  // The cookies next-auth set with its refusal (a fresh CSRF cookie) still belong to the client.
  for (const cookie of response.headers.getSetCookie()) answer.headers.append("set-cookie", cookie);
  return answer;
}
