import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser } from "../support/browser";
import { signInConsole, type ConsoleClient } from "../support/console-session";
import { seedTenant, startTestApp, type TestApp } from "../support/test-app";

// With NEXTAUTH_URL set, a console change's Origin must be that origin, scheme included: a page
// served over plain http on the console's own host is another origin (the session cookie may
// still be sent to it by browsers that do not tell schemes apart). Without it the server cannot
// know its scheme, and the host alone is checked (test/api/console-resolve.test.ts).

let app: TestApp;
let viewer: ConsoleClient;

beforeAll(async () => {
  app = await startTestApp({ env: { NEXTAUTH_URL: "http://127.0.0.1:{port}" } });
  await seedTenant(app.db, "acme");
  viewer = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] }));
});
afterAll(async () => {
  await app?.stop();
});

describe("console mutations with NEXTAUTH_URL set", () => {
  it("refuse the console's own host over another scheme (403, nothing stored), and take its own origin", async () => {
    const own = new URL(app.baseUrl).origin;
    const otherScheme = await viewer.post("/api/console/acme/saved-views", { name: "over https", query: "state=unknown" }, { origin: own.replace(/^http:/, "https:") });
    expect([otherScheme.status, otherScheme.body?.code], otherScheme.text).toEqual([403, "forbidden"]);
    expect(await app.db.savedView.count()).toBe(0);

    const same = await viewer.post("/api/console/acme/saved-views", { name: "over http", query: "state=unknown" }, { origin: own });
    expect(same.status, same.text).toBe(201);
  });
});
