import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser, type ConsoleLogin } from "../support/browser";
import { signInConsole, type ConsoleClient } from "../support/console-session";
import { expectProblem } from "../support/protocol";
import { seedTenant, startTestApp, type TestApp } from "../support/test-app";
import { pruneEndedSessions } from "@/lib/auth/ended-sessions";

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

describe("signing out", () => {
  // Security review: a copy of the session cookie kept working for the JWT's whole lifetime after
  // its person signed out. Signing out now ends that session, and only that one.
  it("ends that session (a copy of its cookie is refused), leaves the person's other sessions alone, and prune forgets it once the JWT has expired", async () => {
    const person = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
    const laptop = await signInConsole(app.baseUrl, person);
    const phone = await signInConsole(app.baseUrl, person);
    expect((await saveView(laptop, "laptop")).status).toBe(201);

    expect([200, 302]).toContain(await laptop.signOut());
    expectProblem(await saveView(laptop, "after sign-out"), 401, "unauthorized");
    expect((await laptop.request("GET", "/t/acme")).status).toBe(307);
    expect((await saveView(phone, "phone")).status).toBe(201);
    expect((await phone.request("GET", "/t/acme")).status).toBe(200);

    const personId = (await app.db.user.findUniqueOrThrow({ where: { email: person.email } })).id;
    const ended = await app.db.endedSession.findMany({ where: { userId: personId } });
    expect(ended).toHaveLength(1);
    // Kept until the JWT would have expired (TOLLGATE_SESSION_HOURS, 8 by default), then pruned.
    expect(ended[0]!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 7 * 3_600_000);
    expect(await pruneEndedSessions(app.db)).toBe(0);
    expect(await pruneEndedSessions(app.db, new Date(ended[0]!.expiresAt.getTime() + 1000))).toBeGreaterThanOrEqual(1);
    expect(await app.db.endedSession.count({ where: { userId: personId } })).toBe(0);
  });
});
