import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser, type ConsoleLogin } from "../support/browser";
import { signInConsole, trySignIn, type ConsoleClient } from "../support/console-session";
import { expectProblem } from "../support/protocol";
import { seedTenant, startTestApp, type TestApp } from "../support/test-app";
import { ENDED_SESSION_MARGIN_MS, pruneEndedSessions } from "@/lib/auth/ended-sessions";

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
    for (const path of ["/signin", "/t/acme", "/t/acme/operations", "/", "/api/auth/signout", "/api/auth/error"]) {
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
    // Kept until the session would have ended anyway (TOLLGATE_SESSION_HOURS, 8 by default, after
    // its sign-in, however often it was refreshed), then pruned.
    expect(ended[0]!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 7.9 * 3_600_000);
    expect(ended[0]!.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 8 * 3_600_000);
    expect(await pruneEndedSessions(app.db)).toBe(0);
    // An hour's margin for the clocks of the web server that set it and the machine that prunes.
    expect(await pruneEndedSessions(app.db, new Date(ended[0]!.expiresAt.getTime() + ENDED_SESSION_MARGIN_MS - 1000))).toBe(0);
    expect(await pruneEndedSessions(app.db, new Date(ended[0]!.expiresAt.getTime() + ENDED_SESSION_MARGIN_MS + 1000))).toBeGreaterThanOrEqual(1);
    expect(await app.db.endedSession.count({ where: { userId: personId } })).toBe(0);
  });
});

describe("password guessing", () => {
  // Security review: 15 wrong passwords in a second, then the right one signed in. Now five
  // failures for one email lock it (30 s, doubling per further failure, 15 min at most), across
  // instances (the count is in PostgreSQL); a success clears the count.
  it("five failures lock the email, even against the right password; other emails are not affected; the lock ends and a success clears the count", async () => {
    const person = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
    const bystander = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
    // Eight guesses at once: five are checked, the rest refused unchecked (code review: all of a
    // burst passed the lock before any failure was counted).
    const failures = await Promise.all(Array.from({ length: 8 }, (_, i) => trySignIn(app.baseUrl, person.email, `wrong-password-${i}`)));
    expect(failures.filter((f) => f.error === "CredentialsSignin")).toHaveLength(5);
    expect(failures.filter((f) => f.error === "TooManyFailedSignIns")).toHaveLength(3);
    expect(failures.every((f) => !f.signedIn)).toBe(true);

    expect(await trySignIn(app.baseUrl, person.email, person.password)).toEqual({ signedIn: false, error: "TooManyFailedSignIns" });
    expect(await trySignIn(app.baseUrl, person.email.toUpperCase(), person.password)).toEqual({ signedIn: false, error: "TooManyFailedSignIns" });
    const [row] = await app.db.signInFailure.findMany({ where: { lockedUntil: { not: null } } });
    expect(row?.failures).toBe(5);
    expect(row!.lockedUntil!.getTime() - Date.now()).toBeGreaterThan(20_000);
    expect(row!.lockedUntil!.getTime() - Date.now()).toBeLessThanOrEqual(31_000);
    // The table holds digests, never the emails strangers typed.
    expect(JSON.stringify(await app.db.signInFailure.findMany())).not.toContain(person.email);
    expect((await trySignIn(app.baseUrl, bystander.email, bystander.password)).signedIn).toBe(true);

    // One more failure once the lock is over doubles it (the count does not start again while
    // the lock, or the 15 minutes after it, last).
    await app.db.signInFailure.updateMany({ where: { emailDigest: row!.emailDigest }, data: { lockedUntil: new Date(Date.now() - 1000) } });
    expect(await trySignIn(app.baseUrl, person.email, "wrong-again")).toEqual({ signedIn: false, error: "CredentialsSignin" });
    const doubled = await app.db.signInFailure.findUniqueOrThrow({ where: { emailDigest: row!.emailDigest } });
    expect(doubled.failures).toBe(6);
    expect(doubled.lockedUntil!.getTime() - Date.now()).toBeGreaterThan(50_000);

    await app.db.signInFailure.updateMany({ where: { emailDigest: row!.emailDigest }, data: { lockedUntil: new Date(Date.now() - 1000) } });
    expect((await trySignIn(app.baseUrl, person.email, person.password)).signedIn).toBe(true);
    expect(await app.db.signInFailure.count({ where: { emailDigest: row!.emailDigest } })).toBe(0);
  });
});
