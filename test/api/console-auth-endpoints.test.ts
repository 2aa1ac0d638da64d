import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser, type ConsoleLogin } from "../support/browser";
import { signInConsole, type ConsoleClient } from "../support/console-session";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// What next-auth answered badly by itself (a principles review, 2026-12-02): /api/auth/* is served
// through lib/auth/auth-route.ts, and a Host or X-Forwarded-Host next-auth cannot parse is a 400
// on every console path (lib/auth/auth-host.ts), where each of these was a 500, a text/plain
// answer, or a 200 for an endpoint the console does not use.

let app: TestApp;
let acme: TenantKeys;
let login: ConsoleLogin;
let session: ConsoleClient;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  login = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
  session = await signInConsole(app.baseUrl, login);
});
afterAll(async () => {
  await app?.stop();
});

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

// node:http, not fetch: fetch sends its own Host and ignores one given.
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  const url = new URL(path, app.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers, setHost: !("host" in headers) }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function expectProblem(res: Raw, status: number, code: string, what: string): void {
  expect([res.status, res.headers["content-type"]], `${what}: ${res.text.slice(0, 200)}`).toEqual([status, "application/problem+json"]);
  expect(JSON.parse(res.text)).toMatchObject({ status, code });
  expect(res.headers["x-request-id"], what).toBeTruthy();
}

describe("next-auth's endpoints", () => {
  it("answers an endpoint next-auth does not serve with a 404, its logger's `_log` included", async () => {
    for (const [method, path] of [
      ["GET", "/api/auth/foo"],
      ["POST", "/api/auth/foo"],
      ["GET", "/api/auth/_log"],
      ["POST", "/api/auth/_log"],
      ["GET", "/api/auth/callback/no-such-provider"],
      ["GET", "/api/auth/__proto__"],
    ] as const) {
      const res = await raw(method, path, { "content-type": "application/x-www-form-urlencoded" }, method === "POST" ? "code=x&level=error" : undefined);
      expectProblem(res, 404, "not-found", `${method} ${path}`);
    }
  });

  it("answers a GET of the credentials callback (it takes a POST) and a POST of a GET-only endpoint with a 405 and Allow", async () => {
    for (const method of ["GET", "HEAD"]) {
      const callback = await raw(method, "/api/auth/callback/credentials");
      expect([callback.status, callback.headers.allow], `${method} callback/credentials`).toEqual([405, "POST, OPTIONS"]);
      if (method === "GET") expectProblem(callback, 405, "method-not-allowed", "GET callback/credentials");
    }
    for (const path of ["/api/auth/providers", "/api/auth/csrf"]) {
      const res = await raw("POST", path, { "content-type": "application/x-www-form-urlencoded" }, "");
      expectProblem(res, 405, "method-not-allowed", `POST ${path}`);
      expect(res.headers.allow).toBe("GET, HEAD, OPTIONS");
    }
  });

  it("answers a POST of the session without its CSRF token with a problem+json 400 (it read '[object Object]')", async () => {
    const res = await session.request("POST", "/api/auth/session", { rawBody: "data=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect([res.status, res.headers.get("content-type"), res.body?.code], res.text).toEqual([400, "application/problem+json", "invalid-request"]);
    expect(res.text).not.toContain("[object Object]");
  });

  it("leaves next-auth's HTML pages as they are: a refused SSO sign-in ends on its Access Denied page, not on JSON", async () => {
    const res = await raw("GET", "/api/auth/error?error=AccessDenied");
    expect([res.status, res.headers["content-type"]]).toEqual([403, "text/html"]);
    expect(res.text).toContain("Access Denied");
  });

  it("shows its error page for a server error without answering a 500 itself (anyone can ask for ?error=Configuration)", async () => {
    const res = await raw("GET", "/api/auth/error?error=Configuration");
    expect([res.status, res.headers["content-type"]]).toEqual([200, "text/html"]);
    expect(res.text).toContain("Server error");
  });

  it("answers a callbackUrl next-auth cannot read with a 400 (query) or leaves it out (a cookie, expired), and follows none off this console (a JSON body included): never a 500", async () => {
    for (const path of ["/api/auth/csrf?callbackUrl=x", "/api/auth/session?callbackUrl=http://%25", "/api/auth/signin?callbackUrl=/t/acme&callbackUrl=javascript:x"]) {
      const res = await raw("GET", path);
      expectProblem(res, 400, "invalid-request", path);
      expect(JSON.parse(res.text).errors).toEqual([{ path: "query.callbackUrl", message: "not a path or an http(s) URL" }]);
    }
    for (const path of ["/api/auth/csrf?callbackUrl=/t/acme", "/api/auth/providers?callbackUrl=//evil.example", "/api/auth/session?callbackUrl=https://evil.example/"]) {
      const res = await raw("GET", path);
      expect(res.status, `${path}: ${res.text.slice(0, 200)}`).toBe(200);
    }
    const signin = await raw("POST", "/api/auth/signin/credentials", { "content-type": "application/json" }, JSON.stringify({ callbackUrl: 1, csrfToken: "x" }));
    expect(signin.status, signin.text.slice(0, 200)).toBeLessThan(500);
    for (const value of ["x", "http://%", "https://evil.example/"]) {
      const cookie = `${session.cookie}; next-auth.callback-url=${encodeURIComponent(value)}`;
      for (const path of ["/api/console/acme/saved-views", "/t/acme/operations", "/", "/api/auth/csrf", "/api/auth/session"]) {
        const res = await raw("GET", path, { cookie });
        expect(res.status, `${path} with ${value}: ${res.text.slice(0, 200)}`).toBeLessThan(400);
        // The browser is told to drop a cookie next-auth cannot read, or given one naming this console.
        const written = [res.headers["set-cookie"] ?? []].flat().find((c) => c.startsWith("next-auth.callback-url="));
        if (value === "x" || value === "http://%") expect(written, `${path} with ${value}`).toMatch(/^next-auth\.callback-url=;.*Max-Age=0/i);
        else if (written) expect(decodeURIComponent(written.split(";")[0]!.split("=")[1]!), path).toMatch(new RegExp(`^${app.baseUrl}/`));
      }
    }
  });

  it("still serves what the console uses: the CSRF token, the providers, the session, sign-in and sign-out", async () => {
    const csrf = await raw("GET", "/api/auth/csrf");
    expect(csrf.status).toBe(200);
    expect(JSON.parse(csrf.text).csrfToken).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(JSON.parse((await raw("GET", "/api/auth/providers")).text))).toContain("credentials");
    expect((await raw("HEAD", "/api/auth/session")).status).toBe(200);
    const me = await session.request("GET", "/api/auth/session");
    expect([me.status, me.body?.user?.email]).toEqual([200, login.email]);
    expect((await session.request("GET", "/api/console/acme/saved-views")).status).toBe(200);
    const other = await signInConsole(app.baseUrl, login);
    expect(await other.signOut()).toBe(200);
    expect((await other.request("GET", "/api/console/acme/saved-views")).status).toBe(401);
  });
});

describe("a Host or X-Forwarded-Host that is not a host name", () => {
  const bad: Record<string, string>[] = [
    { "x-forwarded-host": "a:b" },
    { "x-forwarded-host": "console.example.com, proxy.internal" },
    { "x-forwarded-host": "" },
    { host: "a:b" },
  ];

  it("is a 400 on every console path: pages, the console API and next-auth's endpoints", async () => {
    const cookie = session.cookie!;
    for (const headers of bad) {
      for (const path of ["/", "/signin", "/t/acme/operations", "/api/console/acme/saved-views", "/api/auth/session", "/api/auth/csrf", "/api/auth/signin"]) {
        const res = await raw("GET", path, { ...headers, cookie });
        expectProblem(res, 400, "invalid-request", `${path} ${JSON.stringify(headers)}`);
        expect(JSON.parse(res.text).detail).toMatch(/not one host name/);
      }
    }
  });

  it("is not refused by the agent API, which does not take its address from it", async () => {
    for (const headers of bad) {
      expect((await raw("GET", "/api/live", headers)).status).toBe(200);
      const tools = await raw("GET", "/api/v1/tools", { ...headers, authorization: `Bearer ${acme.admin}` });
      expect(tools.status, tools.text).toBe(200);
    }
  });

  it("serves the console as usual when it is one host name, with or without a port", async () => {
    const cookie = session.cookie!;
    for (const host of ["console.example.com", "console.example.com:8443", "[::1]:3000"]) {
      const res = await raw("GET", "/api/console/acme/saved-views", { "x-forwarded-host": host, cookie });
      expect(res.status, `${host}: ${res.text}`).toBe(200);
    }
  });
});
