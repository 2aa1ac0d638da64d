import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { addSession, createConsoleUser, launchBrowser, openSignedIn, screenshot, type ConsoleLogin } from "../support/browser";
import { call } from "../support/http";
import { seedTenant, startServer, startTestApp, stopServer, type Server, type TestApp } from "../support/test-app";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy";
import { waitFor } from "../support/wait-for";

// The console while PostgreSQL cannot be reached, in a real browser: a page says the database is
// the cause (the server hides its errors' text, so the page asks /api/health), "Try again" loads
// the page's data again once the database is back, and a failure of the console's shell itself
// (its layout reads the user and the queues' counts) gets the same page instead of Next.js's bare
// "Application error". The server reaches its database through a TCP proxy the test takes down.

let app: TestApp;
let proxy: TcpProxy;
let server: Server;
let browser: Browser;
let operator: ConsoleLogin;

beforeAll(async () => {
  app = await startTestApp();
  await seedTenant(app.db, "acme");
  operator = await createConsoleUser(app.db, { role: "operator", tenants: ["acme"] });
  const target = new URL(app.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  [server, browser] = await Promise.all([startServer(proxy.url(app.url)), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  if (server) await stopServer(server);
  await proxy?.close();
  await app?.stop();
});

const health = async () => (await call(server.baseUrl, "GET", "/api/health")).status;

async function databaseDown(): Promise<void> {
  await proxy.down();
  await waitFor("the server to notice the database is gone", async () => (await health()) === 503 || null);
}

async function databaseBack(): Promise<void> {
  await proxy.up();
  await waitFor("the server to reach the database again", async () => (await health()) === 200 || null);
}

// Our message (Next.js's route announcer is also role=alert).
const alert = (page: Page) => page.locator(".error[role=alert]");
const tryAgain = (page: Page) => page.getByRole("button", { name: "Try again" });
const sections = (page: Page) => page.getByRole("navigation", { name: "Console sections" });

describe("the console while the database cannot be reached", () => {
  it("a page says the database is the cause, and Try again loads it once the database is back", async () => {
    const context = await browser.newContext();
    const page = await openSignedIn(context, server.baseUrl, operator, "/t/acme");
    await databaseDown();
    try {
      await sections(page).getByRole("link", { name: /^Operations/ }).click();
      await expect.poll(() => alert(page).textContent(), { timeout: 20_000 }).toContain("cannot reach its database right now");
      expect(await alert(page).textContent()).toContain("Nothing was changed.");
      await screenshot(page, "database-down-page");
      // Pressed while the database is still away: the page stays an error page, and says why again.
      await tryAgain(page).click();
      await expect.poll(() => alert(page).textContent(), { timeout: 20_000 }).toContain("cannot reach its database right now");
    } finally {
      await databaseBack();
    }
    // Only a fresh render helps here: a retry that only re-rendered what failed would fail again.
    await tryAgain(page).click();
    await page.getByRole("heading", { name: "Operations", level: 1, exact: true }).waitFor({ timeout: 20_000 });
    expect(await alert(page).count()).toBe(0);
    await context.close();
  });

  // next-auth hands an error thrown while checking the password to the browser in the URL: it
  // carried Prisma's message (server paths, the bundled code around the call) and the form said
  // "Wrong email or password".
  it("signing in says sign-in is unavailable, and the answer carries none of the database's error", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/signin`);
    await databaseDown();
    try {
      const answer = page.waitForResponse((res) => res.url().includes("/api/auth/callback/credentials"));
      await page.getByLabel("Email").fill(operator.email);
      await page.getByLabel("Password").fill(operator.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      const body = await (await answer).text();
      expect(body).toContain("error=SignInUnavailable");
      expect(body).not.toMatch(/prisma|invocation|\.js/i);
      await expect.poll(() => alert(page).textContent(), { timeout: 20_000 }).toBe("Sign-in is unavailable right now. Try again in a moment.");
      await screenshot(page, "database-down-sign-in");
    } finally {
      await databaseBack();
    }
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/t/"), { timeout: 20_000 });
    await context.close();
  });

  // /signin sends someone with a session onwards, which reads their account: with the database
  // away that must not fail the page for everyone who still has a cookie (review, 2026-12-01).
  it("someone with a session who opens /signin gets the form, not an error page", async () => {
    const context = await browser.newContext();
    await addSession(context, server.baseUrl, operator);
    const page = await context.newPage();
    await databaseDown();
    try {
      const res = await page.goto(`${server.baseUrl}/signin`);
      expect(res?.status()).toBe(200);
      await page.getByRole("button", { name: "Sign in" }).waitFor();
    } finally {
      await databaseBack();
    }
    // Back up, the session still counts: /signin sends it on.
    await page.goto(`${server.baseUrl}/signin`);
    expect(new URL(page.url()).pathname).toBe("/t/acme");
    await context.close();
  });

  it("a console load whose shell fails gets the same page, and Try again brings the whole console", async () => {
    const context = await browser.newContext();
    await addSession(context, server.baseUrl, operator);
    const page = await context.newPage();
    await databaseDown();
    try {
      await page.goto(`${server.baseUrl}/t/acme/reconcile`);
      await expect.poll(() => alert(page).textContent(), { timeout: 20_000 }).toContain("cannot reach its database right now");
      expect(await page.getByText("Application error").count()).toBe(0);
      expect(await sections(page).count()).toBe(0);
      await screenshot(page, "database-down-shell");
    } finally {
      await databaseBack();
    }
    await tryAgain(page).click();
    // The shell is back (its sections), with the page in it.
    await sections(page).waitFor({ timeout: 20_000 });
    await page.getByRole("heading", { name: "Reconcile", level: 1, exact: true }).waitFor();
    expect(await alert(page).count()).toBe(0);
    await context.close();
  });
});
