import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser, type ConsoleLogin } from "../support/browser";
import { signInConsole, type ConsoleClient } from "../support/console-session";
import { expectProblem } from "../support/protocol";
import { seedTenant, startTestApp, type TestApp } from "../support/test-app";

// A console session is a JWT valid for TOLLGATE_SESSION_HOURS. Disabling a user ends it at once
// (the user row is read on every request); re-enabling them must not revive it: a session
// stolen before the disable stays dead, and the person signs in again.

let app: TestApp;
let admin: ConsoleClient;
let login: ConsoleLogin;
let userId: string;

beforeAll(async () => {
  app = await startTestApp();
  await seedTenant(app.db, "acme");
  admin = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "admin", tenants: ["acme"] }));
  login = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
  userId = (await app.db.user.findUniqueOrThrow({ where: { email: login.email } })).id;
});
afterAll(async () => {
  await app?.stop();
});

const saveView = (session: ConsoleClient, name: string) => session.post("/api/console/acme/saved-views", { name, query: "?state=unknown" });
const setDisabled = (disabled: boolean) =>
  admin.request("PATCH", `/api/console/acme/users/${userId}`, { body: { disabled, reason: disabled ? "laptop stolen" : "new laptop" } });

describe("sessions across a disable", () => {
  it("a session from before a disable stays refused after the user is enabled again; a fresh sign-in works", async () => {
    const before = await signInConsole(app.baseUrl, login);
    expect((await saveView(before, "before")).status).toBe(201);

    expect((await setDisabled(true)).status).toBe(200);
    expectProblem(await saveView(before, "while disabled"), 401, "unauthorized");

    expect((await setDisabled(false)).status).toBe(200);
    expectProblem(await saveView(before, "after enable, old session"), 401, "unauthorized");

    const after = await signInConsole(app.baseUrl, login);
    expect((await saveView(after, "after enable, new session")).status).toBe(201);
    const names = (await app.db.savedView.findMany({ where: { userId }, orderBy: { createdAt: "asc" } })).map((v) => v.name);
    expect(names).toEqual(["before", "after enable, new session"]);
  });
});

describe("framing", () => {
  it("console pages may not be framed (security review: a same-site page could show a signed-in console in a frame); the API carries no such headers", async () => {
    for (const path of ["/signin", "/t/acme", "/t/acme/operations", "/"]) {
      const res = await fetch(`${app.baseUrl}${path}`, { redirect: "manual" });
      expect(res.headers.get("content-security-policy"), path).toBe("frame-ancestors 'none'");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    for (const path of ["/api/live", "/api/v1/operations"]) {
      const res = await fetch(`${app.baseUrl}${path}`);
      expect(res.headers.get("x-frame-options"), path).toBeNull();
    }
  });
});
