import type { ConsoleLogin } from "./browser";
import type { Reply } from "./http";

// A console session over plain HTTP: signs in through next-auth's real credentials flow (the
// same requests the /signin page makes) and sends requests the way the console's own pages do,
// with the session cookie and an Origin naming the server. Users come from createConsoleUser
// (test/support/browser.ts).

export type ConsoleRequestOptions = {
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  // The Origin header: the server's own by default; null sends none (a cross-site form or a script).
  origin?: string | null;
};

export type ConsoleClient = {
  email: string | null;
  baseUrl: string;
  // The session's Cookie header (null when signed out), for requests this client cannot make.
  cookie: string | null;
  request: (method: string, path: string, options?: ConsoleRequestOptions) => Promise<Reply>;
  post: (path: string, body?: unknown, options?: Omit<ConsoleRequestOptions, "body">) => Promise<Reply>;
  // The same session against another server instance (next-auth's JWT is valid on every instance).
  on: (baseUrl: string) => ConsoleClient;
  // Signs out through next-auth, as the console's Sign out button does; answers its status.
  signOut: () => Promise<number>;
};

const cookiePairs = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0] ?? "");

// next-auth's credentials flow, as the /signin page makes it: a CSRF token (and its cookie), then
// the form's POST. Answers the POST and every cookie set on the way.
async function postCredentials(baseUrl: string, email: string, password: string): Promise<{ res: Response; jar: Map<string, string> }> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  if (!csrf.ok) throw new Error(`GET /api/auth/csrf answered ${csrf.status}`);
  const jar = new Map<string, string>();
  const keep = (pairs: string[]) => pairs.forEach((p) => jar.set(p.slice(0, p.indexOf("=")), p));
  keep(cookiePairs(csrf));
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: [...jar.values()].join("; ") },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  keep(cookiePairs(res));
  return { res, jar };
}

// Over plain http next-auth names it without the __Secure- prefix; a large JWT would be chunked (.0, .1…).
const sessionCookies = (jar: Map<string, string>) => [...jar.entries()].filter(([name]) => name.startsWith("next-auth.session-token"));

export async function signInConsole(baseUrl: string, login: ConsoleLogin): Promise<ConsoleClient> {
  const { res, jar } = await postCredentials(baseUrl, login.email, login.password);
  await res.arrayBuffer();
  const session = sessionCookies(jar);
  if (!session.length) throw new Error(`sign-in failed for ${login.email}: ${res.status} ${res.headers.get("location") ?? ""}`);
  return client(baseUrl, login.email, session.map(([, pair]) => pair).join("; "));
}

// One try through next-auth's credentials flow, as the sign-in form makes it: whether it signed
// in, and the error code next-auth answered otherwise ("CredentialsSignin", or what authorize threw).
export async function trySignIn(baseUrl: string, email: string, password: string): Promise<{ signedIn: boolean; error: string | null }> {
  const { res, jar } = await postCredentials(baseUrl, email, password);
  const text = await res.text();
  const url = res.headers.get("location") ?? ((JSON.parse(text || "{}") as { url?: string }).url ?? "");
  const signedIn = sessionCookies(jar).length > 0;
  return { signedIn, error: signedIn ? null : new URL(url, baseUrl).searchParams.get("error") };
}

// No session at all: what a signed-out browser (or a stranger's script) sends.
export function anonymousConsole(baseUrl: string): ConsoleClient {
  return client(baseUrl, null, null);
}

function client(baseUrl: string, email: string | null, cookie: string | null): ConsoleClient {
  const request = async (method: string, path: string, options: ConsoleRequestOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = {};
    if (cookie) headers.cookie = cookie;
    const origin = options.origin === undefined ? new URL(baseUrl).origin : options.origin;
    if (origin !== null) headers.origin = origin;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    Object.assign(headers, options.headers);
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: "manual" });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  };
  return {
    email,
    baseUrl,
    cookie,
    request,
    post: (path, body, options = {}) => request("POST", path, { ...options, body }),
    on: (other) => client(other, email, cookie),
    signOut: async () => {
      const csrf = await fetch(`${baseUrl}/api/auth/csrf`, { headers: cookie ? { cookie } : {} });
      const { csrfToken } = (await csrf.json()) as { csrfToken: string };
      const cookies = [cookie, ...cookiePairs(csrf)].filter(Boolean).join("; ");
      const res = await fetch(`${baseUrl}/api/auth/signout`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookies },
        body: new URLSearchParams({ csrfToken, json: "true" }),
      });
      await res.arrayBuffer();
      return res.status;
    },
  };
}
