import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { addSession, createConsoleUser, focusedText, launchBrowser, openSignedIn, screenshot, type ConsoleLogin } from "../support/browser";
import { call, claim } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { createConnection, deliver, newStandardSecret, signStandard, ticketEvent } from "../support/webhooks";

// Issue 5, "Tests — Browser": an operator matches an unmatched webhook event to an unknown
// operation in the inbox and sees it resolved on the trace, the event's payload folded there;
// ignoring needs a reason; a viewer sees no inbox in the navigation and no buttons on the page.
// Operations come from the real agent API, events from real signed deliveries.

let app: TestApp;
let browser: Browser;
let acme: TenantKeys;
let operator: ConsoleLogin;
let viewer: ConsoleLogin;
const secret = newStandardSecret();
let connectionId: string;
let unknownOp: string;
let unmatchedEvent: string;
let strayEvent: string;

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  const [launched] = await Promise.all([launchBrowser(), call(app.baseUrl, "PUT", "/api/v1/tools/tickets.create", { key: acme.admin, body: { policy: { leaseSeconds: 600 } } })]);
  browser = launched;
  ({ connectionId } = await createConnection(app.baseUrl, acme.admin, "tickets", { scheme: "standard-webhooks", secrets: [secret] }));

  // The executor timed out talking to the ticket provider, but had seen the ticket id T-5150.
  const claimed = await claim(app.baseUrl, acme.agent, `idem-${randomUUID()}`, { tool: "tickets.create", args: { title: "Printer on fire" } });
  expect(claimed.status, claimed.text).toBe(201);
  unknownOp = claimed.body.operationId;
  const completed = await call(app.baseUrl, "POST", `/api/v1/operations/${unknownOp}/complete`, {
    key: acme.agent,
    body: { fencingToken: claimed.body.attempt.fencingToken, outcome: "unknown", provider: { resourceId: "T-5150" }, error: { code: "timeout", message: "no answer in 30 s" } },
  });
  expect(completed.status, completed.text).toBe(200);

  // The provider's event lost the correlation metadata, but carries the ticket id.
  const delivered = await deliver(app.baseUrl, connectionId, signStandard(secret, { type: "ticket.created", data: { ticket: { id: "T-5150", title: "Printer on fire" }, metadata: {} } }));
  expect(delivered.body?.status, delivered.text).toBe("unmatched");
  unmatchedEvent = delivered.body.eventId;
  const stray = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.created", "op_from_the_staging_system")));
  strayEvent = stray.body.eventId;

  operator = await createConsoleUser(app.db, { role: "operator", tenants: ["acme"] });
  viewer = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const newContext = () => browser.newContext({ viewport: { width: 1440, height: 900 } });
const card = (page: Page, eventId: string) => page.getByRole("article", { name: `Webhook event ${eventId}` });

async function openInbox(page: Page): Promise<void> {
  await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: /^Inbox/ }).click();
  await page.waitForURL((url) => url.pathname === "/t/acme/inbox");
  await page.getByRole("heading", { level: 1, name: "Inbox" }).waitFor();
}

async function inboxAs(context: BrowserContext, login: ConsoleLogin): Promise<Page> {
  const page = await openSignedIn(context, app.baseUrl, login, "/t/acme/inbox");
  await page.getByRole("heading", { level: 1, name: "Inbox" }).waitFor();
  return page;
}

describe("the webhook inbox (operator)", () => {
  it("matches an unmatched event to the unknown operation it proposes, and the trace shows it resolved by that match", async () => {
    const context = await newContext();
    const page = await openSignedIn(context, app.baseUrl, operator, "/t/acme");
    expect(await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: /^Inbox/ }).textContent()).toContain("2");
    await openInbox(page);

    const event = card(page, unmatchedEvent);
    await event.waitFor();
    expect(await event.textContent()).toContain("unmatched");
    const candidates = event.getByRole("table", { name: `Candidate operations for ${unmatchedEvent}` });
    const first = candidates.locator("tbody tr").first();
    expect(await first.textContent()).toContain(unknownOp);
    expect(await first.textContent()).toContain("resource id T-5150 appears in the payload");
    await screenshot(page, "inbox-operator");

    await event.getByRole("button", { name: `Match ${unmatchedEvent} to ${unknownOp}` }).click();
    const dialog = page.getByRole("dialog", { name: "Match webhook event" });
    await dialog.waitFor();
    expect(await dialog.getByLabel("Operation id").inputValue()).toBe(unknownOp);
    // The connection maps ticket.created to succeeded: the dialog proposes it for confirmation.
    expect(await dialog.getByRole("radio", { name: /^Succeeded/ }).isChecked()).toBe(true);
    // Focus starts on that outcome, to confirm, not on the dialog's × (console review).
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value)).toBe("succeeded");
    await dialog.getByLabel("Note (optional)").fill("Ticket T-5150 in the payload is the one the executor saw.");
    await screenshot(page, "inbox-match-dialog");
    await dialog.getByRole("button", { name: "Match", exact: true }).click();

    const notice = page.locator(".notice[role=status]").filter({ hasText: `Matched ${unmatchedEvent}` });
    await notice.waitFor({ timeout: 15_000 });
    await expect.poll(() => card(page, unmatchedEvent).count(), { timeout: 15_000 }).toBe(0);
    // The card and its button are gone: focus is on the notice of what was done, not the page's body.
    expect(await focusedText(page)).toContain(`Matched ${unmatchedEvent} to ${unknownOp}`);
    const stored = await app.db.operation.findUniqueOrThrow({ where: { id: unknownOp } });
    expect(stored.state).toBe("succeeded");
    expect(stored.resolution).toMatchObject({ via: "webhook", by: `user:${operator.email}` });
    expect(await app.db.webhookEvent.findUniqueOrThrow({ where: { id: unmatchedEvent } })).toMatchObject({ status: "matched", operationId: unknownOp });

    await notice.getByRole("link", { name: unknownOp }).click();
    await page.waitForURL((url) => url.pathname === `/t/acme/operations/${unknownOp}`);
    const timeline = page.getByRole("list", { name: "Operation timeline" });
    await timeline.waitFor();
    // Opened from the inbox, its breadcrumb leads back to the inbox.
    expect(await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Inbox" }).getAttribute("href")).toBe("/t/acme/inbox");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain("succeeded");
    const webhook = timeline.locator("li[data-kind=webhook]");
    expect(await webhook.textContent()).toContain(`Webhook ticket.created from tickets · matched by ${operator.email} as succeeded`);
    const resolution = timeline.locator("li[data-kind=resolution]");
    expect(await resolution.textContent()).toContain("Resolved: succeeded");
    expect(await resolution.textContent()).toContain("webhook");
    // The payload is folded until opened.
    const payload = webhook.locator("details.json");
    expect(await payload.getAttribute("open")).toBeNull();
    await payload.locator("summary").click();
    expect(await payload.locator("pre").textContent()).toContain("T-5150");
    await webhook.scrollIntoViewIfNeeded();
    await screenshot(page, "trace-resolved-by-inbox-match");
    await context.close();
  });

  // Console review, 2026-12-01 night: the dialog said only "One field needs a change" (it has no
  // field for the server to mark), and focus fell to the page's body when its button was disabled.
  it("a match to an operation id that does not exist says so, with focus on what it says", async () => {
    const context = await newContext();
    const page = await inboxAs(context, operator);
    await card(page, strayEvent).getByRole("button", { name: "Match to an operation id…" }).click();
    const dialog = page.getByRole("dialog", { name: "Match webhook event" });
    await dialog.getByLabel("Operation id").fill("op_from_the_staging_system");
    await dialog.getByRole("radio", { name: /^Succeeded/ }).check();
    await dialog.getByRole("button", { name: "Match", exact: true }).click();

    const alert = dialog.locator(".error[role=alert]");
    await expect.poll(() => alert.textContent(), { timeout: 15_000 }).toContain("No operation with this id exists in this tenant.");
    expect(await alert.textContent()).toContain("Nothing was changed.");
    expect(await page.evaluate(() => document.activeElement?.classList.contains("error"))).toBe(true);
    await screenshot(page, "inbox-match-refused");
    expect((await app.db.webhookEvent.findUniqueOrThrow({ where: { id: strayEvent } })).status).toBe("unmatched");
    await context.close();
  });

  it("ignores an event only with a reason", async () => {
    const context = await newContext();
    const page = await inboxAs(context, operator);
    await card(page, strayEvent).getByRole("button", { name: `Ignore ${strayEvent}` }).click();
    const dialog = page.getByRole("dialog", { name: "Ignore webhook event" });
    await dialog.waitFor();
    // Typing goes to the reason at once (showModal() had put focus on the ×; console review).
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA");
    await dialog.getByRole("button", { name: "Ignore event" }).click();
    await dialog.getByText("A reason is required").waitFor();
    expect((await app.db.webhookEvent.findUniqueOrThrow({ where: { id: strayEvent } })).status).toBe("unmatched");

    await dialog.getByLabel("Reason (required)").fill("Sent by the staging system to the production endpoint.");
    // While the ignore is on its way, neither Escape, × nor Cancel closes the dialog: its answer
    // lands where it can be read (review, 2026-12-01: they closed it and a refusal went unseen).
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(`**/webhook-events/${strayEvent}/ignore`, async (route) => {
      await held;
      await route.continue();
    });
    await dialog.getByRole("button", { name: "Ignore event" }).click();
    await dialog.getByRole("button", { name: "Ignoring…" }).waitFor();
    await page.keyboard.press("Escape");
    expect(await dialog.getByRole("button", { name: "Close" }).isDisabled()).toBe(true);
    expect(await dialog.getByRole("button", { name: "Cancel" }).isDisabled()).toBe(true);
    await page.waitForTimeout(300);
    expect(await dialog.isVisible()).toBe(true);
    release();
    await page.locator(".notice[role=status]").filter({ hasText: `Ignored ${strayEvent}` }).waitFor({ timeout: 15_000 });
    expect(await dialog.isVisible()).toBe(false);
    await expect.poll(() => card(page, strayEvent).count(), { timeout: 15_000 }).toBe(0);
    expect(await app.db.webhookEvent.findUniqueOrThrow({ where: { id: strayEvent } })).toMatchObject({ status: "ignored", decidedBy: `user:${operator.email}` });
    await page.getByText("Nothing in the inbox").waitFor();
    // The refresh that emptied the inbox has landed; the notice of what was done is still there.
    expect(await page.locator(".notice[role=status]").filter({ hasText: `Ignored ${strayEvent}` }).isVisible()).toBe(true);
    await screenshot(page, "inbox-empty");

    // The handled view keeps what was decided, by whom and why; an ignored event can still be matched there.
    await page.getByRole("group", { name: "Which events" }).getByRole("button", { name: /^Handled/ }).click();
    await page.waitForURL((url) => url.searchParams.get("status") === "handled");
    const handled = card(page, strayEvent);
    await handled.getByText("Sent by the staging system to the production endpoint.").waitFor({ timeout: 15_000 });
    expect(await handled.locator(".decision").textContent()).toMatch(new RegExp(`^Ignored by ${operator.email} .+ ago: `));
    expect(await handled.getByRole("button", { name: "Match to an operation id…" }).count()).toBe(1);
    expect(await handled.getByRole("button", { name: /^Ignore/ }).count()).toBe(0);
    // The event matched earlier in the inbox is here too, linked to its operation, with nothing left to press.
    const matched = card(page, unmatchedEvent);
    await matched.getByRole("link", { name: unknownOp }).waitFor();
    expect(await matched.getByRole("button", { name: /^(Match|Ignore)/ }).count()).toBe(0);
    await screenshot(page, "inbox-handled");
    await context.close();
  });
});

describe("the webhook inbox (viewer)", () => {
  // Read-only for a viewer, as the reconcile queue is: the section is in the nav (it was hidden
  // although the page answered; newcomer review), and nothing on it can be pressed.
  it("shows a viewer the Inbox, read-only: the link is in the nav, no Match or Ignore button", async () => {
    const fresh = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.created", "nobody")));
    const context = await newContext();
    const page = await openSignedIn(context, app.baseUrl, viewer, "/t/acme");
    await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: /^Inbox/ }).click();
    await page.waitForURL((url) => url.pathname === "/t/acme/inbox");
    await card(page, fresh.body.eventId).waitFor();
    expect(await page.getByRole("button", { name: /^(Match|Ignore)/ }).count()).toBe(0);
    await context.close();
  });
});

// Console review: an operator watching the inbox for a provider's event had to reload by hand.
describe("auto-refresh (viewer)", () => {
  it("once switched on (and remembered), a new event shows up without a reload", async () => {
    const context = await newContext();
    await addSession(context, app.baseUrl, viewer);
    const page = await context.newPage();
    await page.clock.install();
    await page.goto(`${app.baseUrl}/t/acme/inbox`);
    const toggle = page.getByRole("checkbox", { name: "Auto-refresh" });
    expect(await toggle.isChecked()).toBe(false);
    await toggle.check();
    await page.reload();
    await expect.poll(() => toggle.isChecked()).toBe(true);

    const fresh = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.created", "arrives-while-open")));
    expect(await card(page, fresh.body.eventId).count()).toBe(0);
    // Each poll moves the page's clock past one 15 s beat (one refresh) and looks at what the
    // refresh before it brought; polls 3 s apart give a refresh time to land on a slow machine
    // before the next one replaces it (CI once saw refreshes 1 s apart never land).
    await expect
      .poll(
        async () => {
          await page.clock.fastForward(15_000);
          return card(page, fresh.body.eventId).count();
        },
        { timeout: 30_000, interval: 3_000 },
      )
      .toBe(1);
    await toggle.uncheck();
    await context.close();
  });

  // A refresh slower than the beat: each beat used to start another refresh, which replaced the
  // one on its way, so on a slow server none landed. The page's refresh requests are held here;
  // beats that come while one is held start no other until a minute has passed, and once they
  // land the page shows the event.
  it("does not start another refresh while one is still on its way", async () => {
    const context = await newContext();
    await addSession(context, app.baseUrl, viewer);
    const page = await context.newPage();
    await page.clock.install();
    await page.goto(`${app.baseUrl}/t/acme/inbox`);
    await page.getByRole("checkbox", { name: "Auto-refresh" }).check();
    const held: Route[] = [];
    const refreshes = (url: URL) => url.pathname === "/t/acme/inbox" && url.searchParams.has("_rsc");
    // The nav's Inbox link prefetches the same page when a refresh invalidates it: let those through.
    await page.route(refreshes, (route) => (route.request().headers()["next-router-prefetch"] ? route.continue() : void held.push(route)));
    const fresh = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.created", "arrives-during-a-slow-refresh")));
    await page.clock.fastForward(15_000);
    await expect.poll(() => held.length).toBe(1);
    for (let beat = 0; beat < 3; beat++) {
      await page.clock.fastForward(15_000);
      await page.waitForTimeout(300);
    }
    expect(held.length).toBe(1);
    expect(await page.locator("label.auto-refresh").getAttribute("aria-busy")).toBe("true");
    // A minute after it started, a refresh that has not landed is given up on and replaced.
    await page.clock.fastForward(15_000);
    await expect.poll(() => held.length).toBe(2);
    for (const route of held) await route.continue().catch(() => undefined); // the first may have been abandoned
    await page.unroute(refreshes);
    await expect.poll(() => card(page, fresh.body.eventId).count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => page.locator("label.auto-refresh").getAttribute("aria-busy")).toBe("false");
    await page.getByRole("checkbox", { name: "Auto-refresh" }).uncheck();
    await context.close();
  });
});

describe("filtering the inbox (operator)", () => {
  it("narrows the inbox by reason, connection and an exact value, pages within the filter, and says when nothing matches", async () => {
    // 26 unmatched invoices through a second connection (one more than a page), and one event
    // whose type the tickets connection does not map, naming a real operation (unmapped).
    const billingSecret = newStandardSecret();
    const { connectionId: billing } = await createConnection(app.baseUrl, acme.admin, "billing", { scheme: "standard-webhooks", secrets: [billingSecret] });
    const invoices: { eventId: string; providerEventId: string }[] = [];
    for (let i = 0; i < 26; i++) {
      const signed = signStandard(billingSecret, { type: "invoice.paid", data: { invoice: { number: `INV-${i}` } } });
      const res = await deliver(app.baseUrl, billing, signed);
      expect(res.body?.status, res.text).toBe("unmatched");
      invoices.push({ eventId: res.body.eventId, providerEventId: signed.id });
    }
    const named = await claim(app.baseUrl, acme.agent, `idem-${randomUUID()}`, { tool: "tickets.create", args: { title: "Toner low" } });
    expect(named.status, named.text).toBe(201);
    const comment = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.commented", named.body.operationId)));
    expect(comment.body?.status, comment.text).toBe("unmapped");
    const unmappedEvent = comment.body.eventId as string;
    const waiting = await app.db.webhookEvent.groupBy({ by: ["status"], where: { tenantId: acme.tenantId, status: { in: ["unmatched", "unmapped", "contradicting"] } }, _count: true });
    const count = (status: string) => waiting.find((w) => w.status === status)?._count ?? 0;
    const all = count("unmatched") + count("unmapped") + count("contradicting");

    const context = await newContext();
    const page = await inboxAs(context, operator);
    const reasons = page.getByRole("group", { name: "Which events" });
    expect(await reasons.getByRole("button", { name: /^All/ }).textContent()).toBe(`All ${all}`);
    expect(await reasons.getByRole("button", { name: /^Unmatched/ }).textContent()).toBe(`Unmatched ${count("unmatched")}`);
    const cards = page.locator("article.inbox-event");

    // A reason applies at once; the URL carries it. Text typed and not searched is dropped: the box shows the URL's search.
    const searchBox = page.getByRole("search", { name: "Filter the inbox" }).getByRole("searchbox");
    await searchBox.fill("typed but never searched");
    await reasons.getByRole("button", { name: /^Unmapped/ }).click();
    await page.waitForURL((url) => url.searchParams.get("status") === "unmapped");
    await expect.poll(() => searchBox.inputValue()).toBe("");
    await expect.poll(() => cards.count(), { timeout: 15_000 }).toBe(count("unmapped"));
    await card(page, unmappedEvent).waitFor();
    expect(await reasons.getByRole("button", { name: /^Unmapped/ }).getAttribute("aria-pressed")).toBe("true");
    // The chip keeps focus while the list changes under it (the filter bar was remounted, focus thrown to the body).
    expect(await focusedText(page)).toMatch(/^Unmapped/);
    await screenshot(page, "inbox-filtered-unmapped");

    // Back to every reason, then one connection: 26 events, a page of 25 and an older page that keeps the filter.
    await reasons.getByRole("button", { name: /^All/ }).click();
    await page.waitForURL((url) => !url.searchParams.has("status"));
    await page.getByLabel("Connection").selectOption("billing");
    await page.waitForURL((url) => url.searchParams.get("connection") === "billing");
    await page.getByText("The newest 25 of 26 matching").waitFor({ timeout: 15_000 });
    expect(await cards.count()).toBe(25);
    await page.getByRole("navigation", { name: "Inbox pages" }).getByRole("link", { name: "Older →" }).click();
    await page.waitForURL((url) => url.searchParams.has("before") && url.searchParams.get("connection") === "billing");
    await card(page, invoices[0]!.eventId).waitFor();
    expect(await cards.count()).toBe(1);

    // One exact value: the provider's event id (what its dashboard shows); the filter starts from the newest again.
    const search = page.getByRole("search", { name: "Filter the inbox" }).getByRole("searchbox");
    await search.fill(invoices[7]!.providerEventId);
    await search.press("Enter");
    await page.waitForURL((url) => url.searchParams.get("q") === invoices[7]!.providerEventId && !url.searchParams.has("before"));
    await card(page, invoices[7]!.eventId).waitFor();
    await expect.poll(() => cards.count(), { timeout: 15_000 }).toBe(1);
    await screenshot(page, "inbox-filtered-search");

    await search.fill("no-such-event");
    await search.press("Enter");
    await page.getByText("No event in the inbox matches these filters").waitFor({ timeout: 15_000 });
    // The search box keeps focus after Enter, and "Clear" (which leaves with the filters) hands it back to it.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe("search");
    await page.getByRole("search", { name: "Filter the inbox" }).getByRole("button", { name: "Clear" }).click();
    await page.waitForURL((url) => url.pathname === "/t/acme/inbox" && url.search === "");
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe("search");
    expect(await search.inputValue()).toBe("");
    await search.fill("no-such-event");
    await search.press("Enter");
    await page.getByText("No event in the inbox matches these filters").waitFor({ timeout: 15_000 });
    await page.getByRole("link", { name: "Show the whole inbox" }).click();
    await page.waitForURL((url) => url.pathname === "/t/acme/inbox" && url.search === "");
    await page.getByText(`The newest 25 of ${all}`).waitFor({ timeout: 15_000 });
    await context.close();
  });
});

// Review, 2026-12-02: a match takes a flag down, so one raised while the dialog is open is a 409;
// the dialog kept the event as it was when opened and sent the same stale flag again, 409 after 409.
describe("a flag raised while the match dialog is open (operator)", () => {
  it("is refused once, then shown in the dialog, and the next Match settles the operation with the flag read", async () => {
    // Attempt 1 timed out, a retry was allowed, attempt 2 runs.
    const idem = `idem-${randomUUID()}`;
    const args = { title: "Badge reader offline" };
    const first = await claim(app.baseUrl, acme.agent, idem, { tool: "tickets.create", args });
    const operationId: string = first.body.operationId;
    const reply = (body: Record<string, unknown>) => call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, { key: acme.agent, body: { fencingToken: first.body.attempt.fencingToken, ...body } });
    expect((await reply({ outcome: "unknown", error: { code: "timeout", message: "no answer" } })).status).toBe(200);
    expect((await call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/resolve`, { key: acme.admin, body: { outcome: "retry", reason: "nothing at the provider" } })).status).toBe(200);
    expect((await claim(app.baseUrl, acme.agent, idem, { tool: "tickets.create", args })).status).toBe(201);
    const delivered = await deliver(app.baseUrl, connectionId, signStandard(secret, ticketEvent("ticket.created", null)));
    const eventId: string = delivered.body.eventId;

    const context = await newContext();
    const page = await openSignedIn(context, app.baseUrl, operator, "/t/acme/inbox");
    await card(page, eventId).getByRole("button", { name: `Match ${eventId} to ${operationId}` }).click();
    const dialog = page.getByRole("dialog", { name: "Match webhook event" });
    await dialog.waitFor();
    expect(await dialog.getByText("Flagged:").count()).toBe(0);

    // Meanwhile attempt 1 says it succeeded after all: the tool may have acted twice.
    expect((await reply({ outcome: "succeeded" })).status).toBe(409);
    const flagged = await app.db.operation.findUniqueOrThrow({ where: { id: operationId } });
    expect(flagged.flagReason).toContain("may have acted twice");

    await dialog.getByRole("button", { name: "Match", exact: true }).click();
    await dialog.getByRole("alert").filter({ hasText: "flagged since the inbox was read" }).waitFor({ timeout: 15_000 });
    expect((await app.db.operation.findUniqueOrThrow({ where: { id: operationId } })).state).toBe("processing");
    // The page refreshed behind the dialog, which now shows the flag the next Match answers.
    const note = dialog.locator("p[role=note]").filter({ hasText: "Flagged:" });
    await note.waitFor({ timeout: 15_000 });
    expect(await note.textContent()).toContain(flagged.flagReason);
    await screenshot(page, "inbox-match-dialog-flag-raised");

    await dialog.getByRole("button", { name: "Match", exact: true }).click();
    await page.locator(".notice[role=status]").filter({ hasText: `Matched ${eventId}` }).waitFor({ timeout: 15_000 });
    expect(await app.db.operation.findUniqueOrThrow({ where: { id: operationId } })).toMatchObject({ state: "succeeded", flaggedAt: null });
    await context.close();
  });
});
