import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser } from "../support/browser";
import { signInConsole } from "../support/console-session";
import { seedTenant, startTestApp, type TestApp } from "../support/test-app";

// The Users page names the tenants each person belongs to. A tenant the viewing admin does not
// belong to does not exist for them (a 404 everywhere else), so it must not show up there either,
// not even as a colleague's other membership.

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  for (const slug of ["acme", "globex", "initech"]) await seedTenant(app.db, slug);
});
afterAll(async () => {
  await app?.stop();
});

describe("the Users page of a tenant", () => {
  it("lists a member's other tenants only where the viewing admin belongs too", async () => {
    const colleague = await createConsoleUser(app.db, { role: "operator", tenants: ["acme", "globex", "initech"], email: "colleague@example.test" });
    const acmeAdmin = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "admin", tenants: ["acme"] }));
    const twoTenantAdmin = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "admin", tenants: ["acme", "globex"] }));

    const seenByAcmeAdmin = await acmeAdmin.request("GET", "/t/acme/users");
    expect(seenByAcmeAdmin.status).toBe(200);
    expect(seenByAcmeAdmin.text).toContain(colleague.email);
    expect(seenByAcmeAdmin.text).not.toMatch(/globex|initech/);

    const seenByTwoTenantAdmin = await twoTenantAdmin.request("GET", "/t/acme/users");
    expect(seenByTwoTenantAdmin.text).toContain("<code>globex</code>");
    expect(seenByTwoTenantAdmin.text).not.toContain("initech");
  });

  // Console review, 2026-12-01 night: a person without a password was "SSO only" with no single
  // sign-on set up, and nobody could tell why they could not sign in.
  it("says a person without a password cannot sign in while single sign-on is not set up", async () => {
    const admin = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "admin", tenants: ["initech"] }));
    const passwordless = await createConsoleUser(app.db, { role: "viewer", tenants: ["initech"], email: "sso.person@example.test" });
    await app.db.user.update({ where: { email: passwordless.email }, data: { passwordHash: null } });

    const html = (await admin.request("GET", "/t/initech/users")).text;

    expect(html).toMatch(/<span class="badge warn" title="No password, and single sign-on is not set up[^"]*">cannot sign in<\/span>/);
    expect(html).not.toContain("SSO only");
  });
});
