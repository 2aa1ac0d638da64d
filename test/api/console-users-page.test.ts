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
});
