import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { sha256Hex } from "@/lib/crypto/digest";
import { addSession, clickThrough, createConsoleUser, launchBrowser, openSignedIn, screenshot, type ConsoleLogin } from "../support/browser";
import { claimNew, createMix, putStandardTools, TOOLS, type AgentOp, type Mix, type World } from "../support/console-data";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// The operations table and the trace page, in a real browser, as a viewer (issue 4: "Tests").
// Sixty operations are made through the real agent API in every everyday state; each check
// compares what the page shows with what the database holds, in the database's order.

let app: TestApp;
let browser: Browser;
let acme: TenantKeys;
let world: World;
let mix: Mix;
let foreign: AgentOp;
let viewer: ConsoleLogin;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  const globex = await seedTenant(app.db, "globex");
  world = { baseUrl: app.baseUrl, db: app.db, keys: acme };
  const globexWorld = { baseUrl: app.baseUrl, db: app.db, keys: globex };
  await Promise.all([putStandardTools(world), putStandardTools(globexWorld)]);
  [browser, mix, foreign] = await Promise.all([launchBrowser(), createMix(world), claimNew(globexWorld, TOOLS.email, { workflowId: "wf-0" })]);
  viewer = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

// ---- what the database holds, in the table's order (newest first, id as tie-break) ----

async function idsInDb(where: { state?: string; tool?: string } = {}): Promise<string[]> {
  const rows = await app.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM operation
    WHERE tenant_id = ${acme.tenantId}
      AND (${where.state ?? null}::text IS NULL OR state::text = ${where.state ?? null})
      AND (${where.tool ?? null}::text IS NULL OR tool = ${where.tool ?? null})
    ORDER BY created_at DESC, id DESC`;
  return rows.map((r) => r.id);
}

// ---- what the page shows ----

const table = (page: Page) => page.getByRole("table", { name: "Operations" });
const shownIds = (page: Page) => table(page).locator("tbody td.c-id a").allTextContents();
const shownStates = (page: Page) => table(page).locator("tbody .badge[class*='s-']").allTextContents();
const summary = (page: Page) => page.getByRole("navigation", { name: "Pages" }).getByRole("status");
const toolFilter = (page: Page) => page.getByRole("combobox", { name: "Tool", exact: true });
const param = (page: Page, name: string) => new URL(page.url()).searchParams.get(name);

// The table re-renders on the server after each change (a transition): wait until it shows `ids`.
async function expectRows(page: Page, ids: string[], range: string): Promise<void> {
  await expect.poll(() => shownIds(page), { timeout: 15_000 }).toEqual(ids);
  await expect.poll(() => summary(page).textContent(), { timeout: 15_000 }).toBe(range);
}

async function openOperations(context: BrowserContext): Promise<Page> {
  const page = await openSignedIn(context, app.baseUrl, viewer, "/t/acme/operations");
  await table(page).waitFor();
  return page;
}

describe("operations table (viewer)", () => {
  it("lists the tenant's operations newest first, 50 to a page, and none of another tenant's", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const all = await idsInDb();
    expect(all).toHaveLength(60);

    await expectRows(page, all.slice(0, 50), "Rows 1–50 of 60");
    expect(await shownIds(page)).not.toContain(foreign.operationId);
    // Every everyday state is on the first pages somewhere; the badges say which.
    expect(new Set(await shownStates(page))).toEqual(new Set(["succeeded", "failed", "unknown", "processing", "pending"]));
    await screenshot(page, "operations-list");
    await context.close();
  });

  it("filters by state and tool through the page's controls; the filter lives in the URL and survives a reload and a fresh browser", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);

    // State: the disclosure opens a list of checkboxes; ticking one asks the server at once.
    await page.getByLabel("State filter: any state").click();
    await page.getByRole("checkbox", { name: "unknown", exact: true }).check();
    await expect.poll(() => param(page, "state"), { timeout: 10_000 }).toBe("unknown");
    const unknown = await idsInDb({ state: "unknown" });
    expect(unknown).toHaveLength(mix.unknown.length);
    await expectRows(page, unknown, `Rows 1–${unknown.length} of ${unknown.length}`);
    expect(new Set(await shownStates(page))).toEqual(new Set(["unknown"]));
    // The popover closes as a menu does (it stayed open over the table; console review): on
    // Escape, with focus back on its summary, and on a click outside it.
    const statesOpen = () => page.locator("details.ops-states").evaluate((d) => (d as HTMLDetailsElement).open);
    expect(await statesOpen()).toBe(true);
    await page.getByRole("checkbox", { name: "unknown", exact: true }).focus();
    await page.keyboard.press("Escape");
    await expect.poll(statesOpen).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("SUMMARY");
    await page.getByLabel("State filter: unknown").click();
    await expect.poll(statesOpen).toBe(true);
    await page.getByRole("heading", { level: 1, name: "Operations" }).click();
    await expect.poll(statesOpen).toBe(false);

    // Tool, on top of the state.
    await toolFilter(page).selectOption(TOOLS.tickets);
    await expect.poll(() => param(page, "tool"), { timeout: 10_000 }).toBe(TOOLS.tickets);
    expect(param(page, "state")).toBe("unknown");
    const both = await idsInDb({ state: "unknown", tool: TOOLS.tickets });
    expect(both.length).toBeGreaterThan(0);
    expect(both.length).toBeLessThan(unknown.length);
    await expectRows(page, both, `Rows 1–${both.length} of ${both.length}`);
    expect(new Set(await table(page).locator("tbody td.c-tool").allTextContents())).toEqual(new Set([TOOLS.tickets]));
    await screenshot(page, "operations-filtered");

    // A reload is a fresh server render of the same URL: same rows, same controls.
    const url = page.url();
    await page.reload();
    await expectRows(page, both, `Rows 1–${both.length} of ${both.length}`);
    await expect.poll(() => toolFilter(page).inputValue()).toBe(TOOLS.tickets);
    expect(await page.getByLabel("State filter: unknown").count()).toBe(1);

    // The link shared with a colleague: another browser profile, signed in, opens the same view.
    const other = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const shared = new URL(url);
    const fresh = await openSignedIn(other, app.baseUrl, viewer, `${shared.pathname}${shared.search}`);
    await expectRows(fresh, both, `Rows 1–${both.length} of ${both.length}`);
    // A trace opened from a shared link in a new tab has no list of that tab to go back to: its breadcrumb is the plain list.
    const tab = await other.newPage();
    await tab.goto(`${app.baseUrl}/t/acme/operations/${both[0]}`);
    expect(await tab.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Operations" }).getAttribute("href")).toBe("/t/acme/operations");
    await other.close();

    // Open a row's trace, and go back by the breadcrumb: the list as it was left, filters and all
    // (console review: it went to the unfiltered first page).
    await table(page).getByRole("link", { name: both[0] }).click();
    await page.waitForURL((u) => u.pathname === `/t/acme/operations/${both[0]}`);
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Operations" }).click();
    await page.waitForURL((u) => u.pathname === "/t/acme/operations" && u.searchParams.get("tool") === TOOLS.tickets && u.searchParams.get("state") === "unknown");
    await expectRows(page, both, `Rows 1–${both.length} of ${both.length}`);

    // Elsewhere first (the inbox), then a trace: the breadcrumb is the plain list, not filters this tab used before.
    await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: /^Inbox/ }).click();
    await page.waitForURL((u) => u.pathname === "/t/acme/inbox");
    await page.goto(`${app.baseUrl}/t/acme/operations/${both[0]}`);
    expect(await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Operations" }).getAttribute("href")).toBe("/t/acme/operations");
    await context.close();
  });

  it("a 'created from' after 'created before' is named beside the dates and in the empty table, and one click swaps them", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const all = await idsInDb();
    const [span] = await app.db.$queryRaw<{ first: Date; last: Date }[]>`
      SELECT min(created_at) AS first, max(created_at) AS last FROM operation WHERE tenant_id = ${acme.tenantId}`;
    // Whole minutes around every operation (the inputs show minutes), typed the wrong way round.
    const early = new Date(Math.floor(span!.first.getTime() / 60_000) * 60_000 - 60_000);
    const late = new Date(Math.ceil(span!.last.getTime() / 60_000) * 60_000 + 60_000);
    await page.goto(`${app.baseUrl}/t/acme/operations?from=${late.toISOString()}&to=${early.toISOString()}`);

    await table(page).getByText("The time range is empty").waitFor();
    const hint = page.locator("#ops-range-hint");
    expect(await hint.textContent()).toContain("“From” is not before “before”: nothing can match.");
    const from = page.getByLabel("Created from (UTC)");
    expect(await from.getAttribute("aria-invalid")).toBe("true");
    expect(await from.getAttribute("aria-describedby")).toBe("ops-range-hint");
    expect(await hint.getAttribute("aria-live")).toBe("polite");
    await screenshot(page, "operations-empty-time-range");

    await hint.getByRole("button", { name: "Swap them" }).click();
    await expect.poll(() => param(page, "from"), { timeout: 10_000 }).toBe(early.toISOString());
    expect(param(page, "to")).toBe(late.toISOString());
    await expectRows(page, all.slice(0, 50), "Rows 1–50 of 60");
    // The button is gone: the keyboard goes on from the first date, and the live region is empty.
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Created from (UTC)");
    expect(await hint.textContent()).toBe("");
    expect(await from.getAttribute("aria-invalid")).toBeNull();

    // The same from the table's own message.
    await page.goto(`${app.baseUrl}/t/acme/operations?from=${late.toISOString()}&to=${early.toISOString()}`);
    await table(page).getByRole("button", { name: "Swap the two dates" }).click();
    await expectRows(page, all.slice(0, 50), "Rows 1–50 of 60");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Created from (UTC)");
    await context.close();
  });

  it("pages forward and back by keyset with 25 rows a page, each row exactly once", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const all = await idsInDb();

    await page.getByLabel("Rows per page").selectOption("25");
    await expect.poll(() => param(page, "size"), { timeout: 10_000 }).toBe("25");
    await expectRows(page, all.slice(0, 25), "Rows 1–25 of 60");
    expect(await page.getByRole("link", { name: "← Previous" }).count()).toBe(0);

    await page.getByRole("link", { name: "Next →" }).click();
    await expectRows(page, all.slice(25, 50), "Rows 26–50 of 60");
    expect(param(page, "after")).toBeTruthy();
    await page.getByRole("link", { name: "Next →" }).click();
    await expectRows(page, all.slice(50), "Rows 51–60 of 60");
    await screenshot(page, "operations-last-page");
    // The last page offers no next one.
    expect(await page.getByRole("link", { name: "Next →" }).count()).toBe(0);

    await page.getByRole("link", { name: "← Previous" }).click();
    await expectRows(page, all.slice(25, 50), "Rows 26–50 of 60");
    await page.getByRole("link", { name: "← Previous" }).click();
    await expectRows(page, all.slice(0, 25), "Rows 1–25 of 60");
    // Page size is still in the URL after walking.
    expect(param(page, "size")).toBe("25");
    await context.close();
  });

  it("finds exactly one operation by its id through the search box", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const target = mix.retried[0]!;

    await page.getByRole("searchbox", { name: /Search/ }).fill(target.operationId);
    await expect.poll(() => param(page, "q"), { timeout: 10_000 }).toBe(target.operationId);
    await expectRows(page, [target.operationId], "Rows 1–1 of 1");
    await screenshot(page, "operations-search");
    await context.close();
  });

  it("finds an operation by the raw Idempotency-Key an operator has, without the key ever entering the address", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const target = mix.succeeded[0]!;
    const sent: string[] = [];
    page.on("request", (r) => sent.push(r.url()));

    await page.getByText("Find by Idempotency-Key").click();
    await page.getByLabel("Raw key").fill("bad key with spaces");
    await page.getByRole("button", { name: "Find", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "visible ASCII" }).waitFor();
    await page.getByLabel("Raw key").fill(target.idem);
    await page.getByRole("button", { name: "Find", exact: true }).click();

    await expect.poll(() => param(page, "q"), { timeout: 10_000 }).toBe(sha256Hex(target.idem));
    await expectRows(page, [target.operationId], "Rows 1–1 of 1");
    expect(sent.some((url) => url.includes(target.idem))).toBe(false);
    await screenshot(page, "operations-find-by-key");
    await context.close();
  });
  // Console review: an operator pastes the raw key into the search box first; it found nothing and
  // said nothing.
  it("a raw Idempotency-Key typed into the search box finds nothing, and one click searches its digest instead and drops it from the address", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const target = mix.succeeded[1]!;

    await page.getByRole("searchbox", { name: /Search/ }).fill(target.idem);
    await page.getByText("No operations match these filters").waitFor({ timeout: 15_000 });
    await page.getByRole("button", { name: "Look it up as an Idempotency-Key" }).click();

    await expect.poll(() => param(page, "q"), { timeout: 10_000 }).toBe(sha256Hex(target.idem));
    await expectRows(page, [target.operationId], "Rows 1–1 of 1");
    expect(page.url()).not.toContain(encodeURIComponent(target.idem));
    await context.close();
  });

  // Console review: about 35 Tab presses led to the first row.
  it("the first Tab reaches 'Skip to content', which takes the keyboard past the sidebar to the page", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    await page.goto(page.url()); // a fresh load: focus starts at the top of the document
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("content");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.closest("aside") === null)).toBe(true);
    await context.close();
  });

  it("the trace's workflow id leads to every operation of that workflow, and to none of another tenant's with the same id", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const target = mix.succeeded[0]!;
    const { workflowId } = await app.db.operation.findUniqueOrThrow({ where: { id: target.operationId } });
    expect(workflowId).toBe("wf-0");
    const expected = (
      await app.db.$queryRaw<{ id: string }[]>`
        SELECT id FROM operation WHERE tenant_id = ${acme.tenantId} AND workflow_id = ${workflowId} ORDER BY created_at DESC, id DESC`
    ).map((r) => r.id);
    expect(expected.length).toBeGreaterThan(1);

    await page.goto(`${app.baseUrl}/t/acme/operations/${target.operationId}`);
    const link = page.getByRole("definition").getByRole("link", { name: "wf-0", exact: true });
    await clickThrough(page, link, (url) => url.pathname === "/t/acme/operations" && url.searchParams.get("q") === "wf-0");
    await expectRows(page, expected, `Rows 1–${expected.length} of ${expected.length}`);
    expect(await shownIds(page)).not.toContain(foreign.operationId);
    await expect.poll(() => page.getByRole("searchbox", { name: /Search/ }).inputValue()).toBe("wf-0");
    await screenshot(page, "operations-by-workflow");
    await context.close();
  });
});

describe("operation trace (viewer)", () => {
  // Console review: an operator's tab left open said "5 s ago" of what was by then an hour old.
  it("relative times keep counting while the page stays open", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await addSession(context, app.baseUrl, viewer);
    const page = await context.newPage();
    // The browser's clock from here on is the test's: an hour passes in a moment.
    await page.clock.install();
    const target = mix.all[0]!;
    await page.goto(`${app.baseUrl}/t/acme/operations/${target.operationId}`);
    const created = page.locator('dl[aria-label="Operation details"] div', { hasText: "Created" }).locator("time");
    // The operation was made when the suite started: on a slow machine that can be minutes ago.
    expect(await created.textContent()).toMatch(/^\d+(\.\d)? (s|min) ago$/);
    // Ten minutes at a time until the page has hydrated and its timer runs: then it says hours.
    await expect
      .poll(
        async () => {
          await page.clock.fastForward("10:00");
          return created.textContent();
        },
        { timeout: 15_000 },
      )
      .toMatch(/^\d+(\.\d)? h ago$/);
    await context.close();
  });

  it("shows the attempts with their fencing tokens and outcomes, the arguments as collapsible JSON, and never the raw Idempotency-Key", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await openOperations(context);
    const target = mix.retried[0]!; // failed (retryable) on attempt 1, succeeded on attempt 2
    const attempts = await app.db.attempt.findMany({ where: { operationId: target.operationId }, orderBy: { number: "asc" } });
    expect(attempts.map((a) => a.outcome)).toEqual(["retryable_failure", "succeeded"]);

    await page.getByRole("searchbox", { name: /Search/ }).fill(target.operationId);
    await expectRows(page, [target.operationId], "Rows 1–1 of 1");
    // The search reaches the URL after a short throttle; on a loaded machine that replace could
    // land after the click below and take the page back to the list. Let it settle first.
    await page.waitForURL((url) => url.searchParams.get("q") === target.operationId);
    await clickThrough(page, table(page).getByRole("link", { name: target.operationId }), (url) => url.pathname === `/t/acme/operations/${target.operationId}`);

    const timeline = page.getByRole("list", { name: "Operation timeline" });
    await timeline.waitFor();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain(TOOLS.payments);
    // One start entry per attempt, carrying that attempt's own fencing token ...
    for (const a of attempts) {
      const start = timeline.locator("li").filter({ hasText: new RegExp(`^(Claimed · attempt|Attempt) ${a.number} (started|took over)`) });
      expect(await start.count(), `start entry of attempt ${a.number}`).toBe(1);
      expect(await start.locator("dt", { hasText: "Fencing token" }).count()).toBe(1);
      expect(await start.locator("dd code").first().textContent()).toBe(a.fencingToken.toString());
    }
    // ... and one end entry saying how it ended.
    const titles = await timeline.locator("li .t-title").allTextContents();
    expect(titles).toEqual(expect.arrayContaining(["Attempt 1 failed (retryable)", "Attempt 2 succeeded"]));
    expect(titles.indexOf("Attempt 1 failed (retryable)")).toBeLessThan(titles.indexOf("Attempt 2 succeeded"));
    expect(await timeline.textContent()).toContain("rate_limited");
    // The provider's resource id is among the header facts (it was only inside an attempt's entry).
    const stored = await app.db.operation.findUniqueOrThrow({ where: { id: target.operationId } });
    const resourceId = (stored.result as { resourceId?: string } | null)?.resourceId;
    expect(resourceId).toBeTruthy();
    const facts = page.getByRole("definition").filter({ has: page.locator("code", { hasText: resourceId! }) });
    expect(await page.locator('dl[aria-label="Operation details"] div', { hasText: "Resource id" }).locator("dd code").textContent()).toBe(resourceId);
    expect(await facts.count()).toBeGreaterThan(0);
    // What an operator takes to the provider's dashboard, one click away: the downstream key, copied exactly.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.baseUrl });
    await page.getByRole("button", { name: "Copy downstream key" }).click();
    await page.getByRole("button", { name: "Copy downstream key" }).getByText("Copied").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(stored.downstreamKey);
    await page.getByRole("button", { name: "Copy operation id" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(target.operationId);

    // The arguments: pretty-printed JSON in a <details> that starts open and folds.
    const args = page.locator("details.json", { has: page.locator("summary", { hasText: /^Arguments/ }) });
    expect(await args.count()).toBe(1);
    expect(await args.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(true);
    expect(JSON.parse((await args.locator("pre").textContent()) ?? "null")).toEqual(target.args);
    await screenshot(page, "operation-trace");
    await args.locator("summary").click();
    expect(await args.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    expect(await args.locator("pre").isVisible()).toBe(false);

    // The raw key is never stored, so it can appear nowhere: not in the DOM, not in the
    // server-rendered HTML with its inline React payload, not in the list's HTML.
    expect(await page.content()).not.toContain(target.idem);
    const served = await (await context.request.get(`${app.baseUrl}/t/acme/operations/${target.operationId}`)).text();
    expect(served).toContain(target.operationId);
    expect(served).not.toContain(target.idem);
    const list = await (await context.request.get(`${app.baseUrl}/t/acme/operations?size=100`)).text();
    for (const op of mix.all) expect(list, `raw key of ${op.operationId}`).not.toContain(op.idem);
    await context.close();
  });

  it("shows an expired lease that became unknown, with the claim that found it", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await addSession(context, app.baseUrl, viewer);
    const page = await context.newPage();
    const target = mix.unknown.find((op) => op.tool === TOOLS.tickets)!;
    const response = await page.goto(`${app.baseUrl}/t/acme/operations/${target.operationId}`);
    expect(response?.status()).toBe(200);
    const timeline = page.getByRole("list", { name: "Operation timeline" });
    await timeline.waitFor();
    expect(await page.locator("h1 .badge.s-unknown").count()).toBe(1);
    // The lease ran out with no report; the agent's next claim found it and got 409 outcome-unknown.
    const titles = await timeline.locator("li .t-title").allTextContents();
    expect(titles[0]).toBe("Claimed · attempt 1 started");
    expect(titles).toContain("Attempt 1 lost its lease");
    expect(titles.some((t) => /conflicting claim/.test(t)), titles.join(" | ")).toBe(true);
    expect(await timeline.textContent()).toContain("lease-expired");
    // A viewer reads, an operator resolves: no resolve button here.
    expect(await page.getByRole("button", { name: /Resolve/ }).count()).toBe(0);
    expect(await page.content()).not.toContain(target.idem);
    await screenshot(page, "operation-trace-unknown");
    await context.close();
  });
});
