import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import { createUser } from "@/lib/users/create-user";
import type { Db } from "@/lib/db";
import { signInConsole } from "./console-session";

// Debian's chromium, never a downloaded browser; flags as this machine's network needs them.
const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const screenshotDir = path.resolve("test", ".artifacts", "screenshots");

// playwright gives every launch a fresh, empty profile directory of its own.
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: chromiumArgs });
}

export type ConsoleLogin = { email: string; password: string };

// A console user made through the same lib function as `npm run tollgate -- user create`.
export async function createConsoleUser(db: Db, options: { role: "viewer" | "operator" | "approver" | "admin"; tenants: string[]; email?: string }): Promise<ConsoleLogin> {
  const email = options.email ?? `${options.role}-${Math.random().toString(36).slice(2, 8)}@example.test`;
  const password = `pw-${Math.random().toString(36).slice(2)}-long-enough`;
  await createUser({ db, actor: "test", input: { email, role: options.role, tenants: options.tenants, password } });
  return { email, password };
}

export async function signIn(context: BrowserContext, baseUrl: string, login: ConsoleLogin): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${baseUrl}/signin`);
  await page.getByLabel("Email").fill(login.email);
  await page.getByLabel("Password").fill(login.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname.startsWith("/t/"), { timeout: 20_000 });
  return page;
}

// Gives the context a fresh session of `login`: signed in through next-auth's real credentials
// flow over HTTP (the requests the sign-in form makes; test/support/console-session.ts), its
// cookie handed to the browser. The form itself is what sign-in.test.ts drives; every other
// browser test starts here, which spares each test the form's page and the landing page: two
// page loads of a second or more each on a 2-core machine.
export async function addSession(context: BrowserContext, baseUrl: string, login: ConsoleLogin): Promise<void> {
  const session = await signInConsole(baseUrl, login);
  const pairs = (session.cookie ?? "").split("; ").filter(Boolean);
  await context.addCookies(
    pairs.map((pair) => {
      const at = pair.indexOf("=");
      return { name: pair.slice(0, at), value: pair.slice(at + 1), url: baseUrl, httpOnly: true, sameSite: "Lax" as const };
    }),
  );
}

// A console page (`pagePath`, e.g. "/t/acme/inbox") in a new tab of the context, signed in as `login`.
export async function openSignedIn(context: BrowserContext, baseUrl: string, login: ConsoleLogin, pagePath: string): Promise<Page> {
  await addSession(context, baseUrl, login);
  const page = await context.newPage();
  await page.goto(`${baseUrl}${pagePath}`);
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
}

// Clicks a link and waits for the page it leads to. A click that lands while the list's own
// server re-render (a debounced search) commits can be swallowed with the row it was on; a
// person would click again, and so does this, up to three times.
export async function clickThrough(page: Page, link: Locator, arrived: (url: URL) => boolean): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await link.click();
    try {
      await page.waitForURL(arrived, { timeout: 10_000 });
      return;
    } catch (error) {
      if (arrived(new URL(page.url()))) return;
      if (attempt === 3) throw error;
      // Visible in the test output, so a click that keeps being lost is noticed rather than absorbed.
      console.warn(`clickThrough: no navigation 10 s after click ${attempt} (still at ${page.url()}); clicking again`);
    }
  }
}

// The focused element's text, or a marker when focus fell to the page itself (the body, or
// <main> after a skip link): what a keyboard or screen-reader user is left on after an action.
export function focusedText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const active = document.activeElement;
    return active && active !== document.body && active.tagName !== "MAIN" ? (active.textContent ?? "") : "(the page, not a control or a notice)";
  });
}
