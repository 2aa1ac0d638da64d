import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { startTestApp, seedTenant, type TestApp, type TenantKeys } from "../support/test-app";
import { addSession, createConsoleUser, launchBrowser, screenshot, signIn, type ConsoleLogin } from "../support/browser";
import { call, claim } from "../support/http";

let app: TestApp;
let browser: Browser;
let acme: TenantKeys;
let globex: TenantKeys;
let login: ConsoleLogin;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
  login = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("console sign-in", () => {
  it("sends a visitor to sign in, lands a member on their tenant, and signs out", async () => {
    const context = await browser.newContext();
    const anonymous = await context.newPage();
    await anonymous.goto(`${app.baseUrl}/t/acme`);
    expect(new URL(anonymous.url()).pathname).toBe("/signin");
    await screenshot(anonymous, "sign-in");

    const page = await signIn(context, app.baseUrl, login);
    expect(new URL(page.url()).pathname).toBe("/t/acme");
    await expect(page.getByRole("navigation", { name: "Console sections" })).toBeTruthy();
    await screenshot(page, "signed-in-overview");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.pathname === "/signin");
    await page.goto(`${app.baseUrl}/t/acme`);
    expect(new URL(page.url()).pathname).toBe("/signin");
    await context.close();
  });

  // Newcomer review: a link to a page (from a pager, a chat) lost its target at sign-in.
  it("brings a visitor who opened a console link without a session back to that very page after signing in", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const target = "/t/acme/audit?action=user.";
    await page.goto(`${app.baseUrl}${target}`);
    const signin = new URL(page.url());
    expect(signin.pathname).toBe("/signin");
    expect(signin.searchParams.get("callbackUrl")).toBe(target);
    await page.getByLabel("Email").fill(login.email);
    await page.getByLabel("Password").fill(login.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/t/acme/audit", { timeout: 20_000 });
    expect(new URL(page.url()).search).toBe("?action=user.");
    await context.close();
    // A header of that name from the client is overwritten, never followed.
    const fresh = await browser.newContext();
    const res = await fresh.request.get(`${app.baseUrl}/t/acme`, { headers: { "x-tollgate-console-path": "//evil.example/" }, maxRedirects: 0 });
    expect(res.status()).toBe(307);
    expect(res.headers().location).toBe(`/signin?callbackUrl=${encodeURIComponent("/t/acme")}`);
    await fresh.close();
  });

  it("follows a callbackUrl on this console after signing in, and never one that leaves it", async () => {
    const signInWith = async (callbackUrl: string) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      // Requests that leave the console fail at once (and are counted) instead of waiting on the network.
      const offsite: string[] = [];
      await context.route((url) => url.origin !== app.baseUrl, (route) => (offsite.push(route.request().url()), route.abort()));
      await page.goto(`${app.baseUrl}/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`);
      await page.getByLabel("Email").fill(login.email);
      await page.getByLabel("Password").fill(login.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      // An aborted navigation off the console rejects the wait; what matters is where it went.
      await page.waitForURL((url) => url.pathname.startsWith("/t/") || offsite.length > 0, { timeout: 20_000 }).catch(() => undefined);
      const landed = new URL(page.url());
      await context.close();
      return { landed, offsite };
    };
    const followed = await signInWith("/t/acme/audit?action=user.");
    expect(followed.landed.pathname + followed.landed.search).toBe("/t/acme/audit?action=user.");

    for (const evil of ["https://evil.example/", "//evil.example/", "/\\evil.example/", "/\t/evil.example/", "javascript:alert(1)"]) {
      const { landed, offsite } = await signInWith(evil);
      expect(offsite, evil).toEqual([]);
      expect(landed.origin, evil).toBe(app.baseUrl);
      expect(landed.pathname, evil).toBe("/t/acme");
    }
  });

  it("sends someone already signed in past the form: to the callbackUrl on this console, else their tenant, never off it", async () => {
    const context = await browser.newContext();
    const page = await signIn(context, app.baseUrl, login);
    await page.goto(`${app.baseUrl}/signin`);
    expect(new URL(page.url()).pathname).toBe("/t/acme");
    await page.goto(`${app.baseUrl}/signin?callbackUrl=${encodeURIComponent("/t/acme/audit?action=user.")}`);
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe("/t/acme/audit?action=user.");
    await page.goto(`${app.baseUrl}/signin?callbackUrl=${encodeURIComponent(`${app.baseUrl}/t/acme/operations`)}`);
    expect(new URL(page.url()).pathname).toBe("/t/acme/operations");
    // A forwarded host as a proxy may write it (capitals, the default port): a path is still followed
    // (it was dropped for "/": the origin was compared as written, not as a URL parser reads it).
    const proxied = await context.request.get(`${app.baseUrl}/signin?callbackUrl=${encodeURIComponent("/t/acme/audit")}`, {
      headers: { "x-forwarded-host": "Console.Example:80" },
      maxRedirects: 0,
    });
    expect(proxied.headers().location).toBe("/t/acme/audit");
    for (const evil of ["https://evil.example/", "//evil.example/"]) {
      const res = await context.request.get(`${app.baseUrl}/signin?callbackUrl=${encodeURIComponent(evil)}`, { maxRedirects: 0 });
      expect(res.status(), evil).toBe(307);
      expect(res.headers().location, evil).toBe("/");
    }
    // Signed out, the form is there again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.pathname === "/signin");
    await page.goto(`${app.baseUrl}/signin`);
    expect(await page.getByRole("button", { name: "Sign in" }).count()).toBe(1);
    await context.close();
  });

  // Security review: the form had no method, so one sent before hydration was a GET with the
  // password in the query string. Without JavaScript every submission is that early one.
  it("never puts the password in a URL, even when the form is sent before the page's script runs", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));
    await page.goto(`${app.baseUrl}/signin?callbackUrl=%2Ft%2Facme`);
    await page.getByLabel("Email").fill(login.email);
    await page.getByLabel("Password").fill(login.password);
    const [sent] = await Promise.all([page.waitForRequest((r) => new URL(r.url()).pathname === "/signin" && r.method() === "POST"), page.getByRole("button", { name: "Sign in" }).click()]);
    expect(sent.postData()).toContain("password=");
    await page.waitForLoadState("load");
    expect(urls.filter((url) => url.includes(encodeURIComponent(login.password)) || url.includes("password="))).toEqual([]);
    expect(page.url()).not.toContain("password");
    // The page answers the POST with the form again, to be sent once its script runs.
    expect((await sent.response())?.status()).toBe(200);
    expect(await page.getByLabel("Password").inputValue()).toBe("");
    await context.close();
  });

  it("refuses a wrong password without saying which part was wrong", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/signin`);
    await page.getByLabel("Email").fill(login.email);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    // Next's route announcer is also role=alert; look for our message itself.
    await page.getByText("Wrong email or password.").waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).pathname).toBe("/signin");
    await context.close();
  });

  it("says so when an email is locked after too many failed sign-ins, even for the right password", async () => {
    const locked = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/signin`);
    for (let i = 0; i < 5; i++) {
      await page.getByLabel("Email").fill(locked.email);
      await page.getByLabel("Password").fill(`not-the-password-${i}`);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("Wrong email or password.").waitFor({ timeout: 10_000 });
      await page.getByRole("button", { name: "Sign in" }).and(page.locator(":enabled")).waitFor();
    }
    await page.getByLabel("Password").fill(locked.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Too many failed sign-ins for this email. Wait a few minutes, then try again.").waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).pathname).toBe("/signin");
    await screenshot(page, "sign-in-locked");
    await context.close();
  });

  it("hides another tenant: a member of acme gets 404 for globex", async () => {
    const context = await browser.newContext();
    await addSession(context, app.baseUrl, login);
    const page = await context.newPage();
    const response = await page.goto(`${app.baseUrl}/t/globex`);
    expect(response?.status()).toBe(404);
    expect(acme.tenantId).toBeTruthy();

    // Globex's operation, looked up under acme (where the user is a member): a real 404 status too.
    await call(app.baseUrl, "PUT", "/api/v1/tools/tickets.create", { key: globex.admin, body: {} });
    const claimed = await claim(app.baseUrl, globex.agent, "globex-key-1", { tool: "tickets.create", args: { title: "x" } });
    expect(claimed.status).toBe(201);
    const trace = await page.goto(`${app.baseUrl}/t/acme/operations/${claimed.body.operationId}`);
    expect(trace?.status()).toBe(404);
    await expect(page.getByText("Operation not found").first().textContent()).resolves.toContain("Operation not found");
    const missing = await page.goto(`${app.baseUrl}/t/acme/operations/op_does_not_exist`);
    expect(missing?.status()).toBe(404);
    await context.close();
  });

  it("answers what does not exist with a page that says so and where to go, inside the console for a member", async () => {
    const context = await browser.newContext();
    await addSession(context, app.baseUrl, login);
    const page = await context.newPage();
    const sections = page.getByRole("navigation", { name: "Console sections" });

    // Another tenant (or none): the root page, which links home; no console navigation.
    expect((await page.goto(`${app.baseUrl}/t/globex`))?.status()).toBe(404);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    expect(await page.title()).toBe("Not found · Tollgate");
    expect(await sections.count()).toBe(0);
    await page.getByRole("link", { name: "Go to your console" }).click();
    await page.waitForURL((url) => url.pathname === "/t/acme");

    // In the member's tenant: an unknown section, an unknown approval. The console's own page.
    for (const path of ["/t/acme/nope", "/t/acme/approvals/apr_nope"]) {
      expect((await page.goto(`${app.baseUrl}${path}`))?.status(), path).toBe(404);
      await page.getByRole("heading", { name: "Not found", exact: true }).waitFor();
      expect(await sections.count(), path).toBe(1);
      expect(await page.getByRole("link", { name: "Back to the overview" }).getAttribute("href")).toBe("/t/acme");
    }
    await screenshot(page, "console-not-found");
    await context.close();
  });
});
