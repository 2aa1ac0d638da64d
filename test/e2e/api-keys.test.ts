import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { createConsoleUser, focusedText, launchBrowser, openSignedIn, screenshot, type ConsoleLogin } from "../support/browser";
import { call } from "../support/http";
import { seedTenant, startTestApp, type TestApp } from "../support/test-app";

// API keys in a real browser (console review, 2026-12-01 night): the secret shown once survives
// a stray Escape, and a revoke says what it did, with focus on that, although the key's row and
// its button move away (revoked keys are listed last).

let app: TestApp;
let browser: Browser;
let admin: ConsoleLogin;

beforeAll(async () => {
  app = await startTestApp();
  await seedTenant(app.db, "acme");
  browser = await launchBrowser();
  admin = await createConsoleUser(app.db, { role: "admin", tenants: ["acme"] });
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("API keys (admin)", () => {
  it("creates a key whose secret survives Escape, then revokes it: the page says so, with focus on it, and the secret stops working", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openSignedIn(context, app.baseUrl, admin, "/t/acme/api-keys");
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();

    await page.getByRole("button", { name: "Create API key" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Principal").fill("billing-agent");
    await dialog.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("heading", { name: "Copy the secret now" }).waitFor();
    const secret = await page.locator("input.secret-value").inputValue();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Copy");
    await page.keyboard.press("Escape");
    expect(await page.getByRole("heading", { name: "Copy the secret now" }).isVisible()).toBe(true);
    expect((await call(app.baseUrl, "GET", "/api/v1/operations?tool=x&idempotencyKey=k", { key: secret })).status).toBe(404);
    await page.getByRole("button", { name: /^I have stored it/ }).click();

    await page.getByRole("button", { name: /^Revoke .* \(billing-agent\)$/ }).click();
    const confirm = page.getByRole("dialog", { name: /^Revoke / });
    await confirm.getByLabel("Reason (recorded in the audit log)").fill("rotated");
    await confirm.getByRole("button", { name: "Revoke key" }).click();

    const notice = page.locator(".notice[role=status]").filter({ hasText: "Revoked" });
    await notice.waitFor({ timeout: 15_000 });
    expect(await notice.textContent()).toContain("(billing-agent): requests with it are refused from now on.");
    expect(await focusedText(page)).toContain("Revoked");
    // The list refreshes to what is stored, and the notice (and its focus) stays.
    await page.getByText("4 live keys, 1 revoked.", { exact: false }).waitFor({ timeout: 15_000 });
    expect(await focusedText(page)).toContain("Revoked");
    await screenshot(page, "api-key-revoked");
    expect((await call(app.baseUrl, "GET", "/api/v1/operations?tool=x&idempotencyKey=k", { key: secret })).status).toBe(401);
    await context.close();
  });
});
