import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { addSession, createConsoleUser, launchBrowser, screenshot, type ConsoleLogin } from "../support/browser";
import { call, claim } from "../support/http";
import { createMix, putStandardTools, putTool, type Mix, type World } from "../support/console-data";
import { createConnection, deliver, signStandard, ticketEvent } from "../support/webhooks";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// The console's layout at a phone's width and an ordinary laptop's (UX review: the sidebar never
// collapsed, tables pushed the page sideways and hid the Edit buttons, a long email ran past the
// sidebar). Every section is opened as an admin whose email is long, over data made through the
// real agent API with long tool names, workflows, reasons and audit actions; on each page the
// document must not scroll sideways (wide tables scroll inside their own box).

let app: TestApp;
let browser: Browser;
let acme: TenantKeys;
let mix: Mix;
let admin: ConsoleLogin;

const LONG_TOOL = "payments.refund-with-manual-review-by-finance";
const LONG_REASON = "Customer confirmed by phone; the refund matches ticket SUP-88123 and the finance lead's note in the escalation thread.";

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  const world: World = { baseUrl: app.baseUrl, db: app.db, keys: acme };
  const [launched] = await Promise.all([launchBrowser(), putStandardTools(world)]);
  browser = launched;
  await putTool(world, LONG_TOOL, { approval: "required", approvalTtlSeconds: 7200, leaseSeconds: 600, takeover: "deduplicated", backoff: { baseMs: 500, capMs: 30_000 } });
  mix = await createMix(world, 1);
  // Three approval requests with long workflow ids: two decided with long reasons, one waiting.
  const ids: string[] = [];
  const operationIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await claim(app.baseUrl, acme.agent, `layout-refund-${i}`, {
      tool: LONG_TOOL,
      args: { amount: 4200 + i, currency: "eur", charge: `ch_3PqL${i}`, reason: "requested_by_customer", note: "a long argument list to preview" },
      workflowId: `release_billing-worker_v1.46.${i}-canary-eu-west`,
    });
    expect(res.status, res.text).toBe(202);
    ids.push(res.body.approval.id as string);
    operationIds.push(res.body.operationId as string);
  }
  for (const [i, id] of ids.slice(0, 2).entries()) {
    const res = await call(app.baseUrl, "POST", `/api/v1/approvals/${id}/decision`, { key: acme.approver, body: { decision: i ? "reject" : "approve", reason: LONG_REASON } });
    expect(res.status, res.text).toBe(200);
  }
  // Long audit action names (webhook_connection.*), as in the review's screenshot.
  const webhookSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
  const { connectionId } = await createConnection(app.baseUrl, acme.admin, "tickets-provider-production", { scheme: "standard-webhooks", secrets: [webhookSecret] });
  // An event in the inbox, so its filter bar is measured too.
  const event = await deliver(app.baseUrl, connectionId, signStandard(webhookSecret, ticketEvent("ticket.created", "a-correlation-value-nobody-knows")));
  expect(event.body?.status, event.text).toBe("unmatched");
  // An unknown outcome of a tool whose name is near the 100-character limit, with a long error:
  // the reconcile queue must still show every column at 1280 px (console review: the Tool column
  // took the name's width and pushed Attempts and Last error under the pinned Resolve).
  const longest = `crm.contacts.upsert-${"x".repeat(60)}-overflow.v2`;
  await putTool(world, longest, { takeover: "never" });
  const stuck = await claim(app.baseUrl, acme.agent, "layout-long-tool", { tool: longest, args: { email: "a@b.example" } });
  expect(stuck.status, stuck.text).toBe(201);
  const unknown = await call(app.baseUrl, "POST", `/api/v1/operations/${stuck.body.operationId}/complete`, {
    key: acme.agent,
    body: { fencingToken: stuck.body.attempt.fencingToken, outcome: "unknown", error: { code: "timeout", message: "the CRM did not answer within 30 s; the upsert may have been applied" } },
  });
  expect(unknown.status, unknown.text).toBe(200);
  // The widest cells these rows can have (console review: the demo's data scrolled at 1280 px where
  // this test's fitted): retries refused meanwhile, one of them with other arguments (Operations:
  // "1 mismatch · 2 in all"; Reconcile: "· 2 refused"), and the request still awaiting approval
  // flagged by a provider's event about it ("awaiting approval" and "flagged").
  expect((await claim(app.baseUrl, acme.agent, "layout-long-tool", { tool: longest, args: { email: "a@b.example" } })).status).toBe(409);
  expect((await claim(app.baseUrl, acme.agent, "layout-long-tool", { tool: longest, args: { email: "c@d.example" } })).status).toBe(422);
  const aboutWaiting = await deliver(app.baseUrl, connectionId, signStandard(webhookSecret, ticketEvent("ticket.created", operationIds[2]!)));
  expect(aboutWaiting.body?.status, aboutWaiting.text).toBe("contradicting");
  admin = await createConsoleUser(app.db, { role: "admin", tenants: ["acme"], email: "operations.lead.oncall.rotation@payments.platform.example.test" });
  // Another member: their row has a role picker, whose visually hidden label once widened the
  // Users page to 970 px at 390 (console review, 2026-12-01 night).
  await createConsoleUser(app.db, { role: "operator", tenants: ["acme"] });
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

type Measure = { path: string; scrollWidth: number; innerWidth: number; tables: { scrollWidth: number; clientWidth: number; cols: string }[] };

// The sections a person opens, as paths under /t/acme.
const sections = () => [
  { name: "overview", path: "" },
  { name: "operations", path: "/operations" },
  { name: "trace", path: `/operations/${mix.succeeded[0]!.operationId}` },
  { name: "reconcile", path: "/reconcile" },
  { name: "tools", path: "/tools" },
  { name: "audit", path: "/audit" },
  { name: "users", path: "/users" },
  { name: "approvals", path: "/approvals" },
  { name: "approvals-decided", path: "/approvals?view=decided" },
  { name: "inbox", path: "/inbox" },
  { name: "subscriptions", path: "/subscriptions" },
  { name: "api-keys", path: "/api-keys" },
];

// Opens a section and waits until its content (not its loading skeleton) is there.
async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${app.baseUrl}/t/acme${path}`);
  await page.locator("main h1").first().waitFor();
  await page.locator('main [aria-busy="true"]').first().waitFor({ state: "detached", timeout: 15_000 });
  expect(await page.locator("main h1").first().textContent(), path).not.toMatch(/^Could not|not found/i);
}

const widths = (page: Page): Promise<Measure> =>
  page.evaluate(() => ({
    path: location.pathname + location.search,
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    tables: [...document.querySelectorAll("main .table-wrap")].map((wrap) => ({ scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth, cols: [...wrap.querySelectorAll("thead th")].map((th) => `${th.textContent?.slice(0, 8)}:${Math.round(th.getBoundingClientRect().width)}`).join(",") })),
  }));

// At a laptop's width these lists show every column without scrolling inside their box either.
const fitAt1280 = new Set(["overview", "operations", "tools", "audit", "approvals", "approvals-decided", "reconcile", "inbox"]);

describe.each([
  { label: "phone", width: 390, height: 844 },
  { label: "laptop", width: 1280, height: 800 },
])("console layout at $width px ($label)", ({ width, height }) => {
  it("no section scrolls the document sideways", async () => {
    const context = await browser.newContext({ viewport: { width, height } });
    await addSession(context, app.baseUrl, admin);
    const page = await context.newPage();
    const measured: Measure[] = [];
    const cramped: string[] = [];
    const titles: string[] = [];
    for (const section of sections()) {
      await open(page, section.path);
      titles.push(await page.title());
      const m = await widths(page);
      measured.push(m);
      if (width === 1280 && fitAt1280.has(section.name) && m.tables.some((t) => t.scrollWidth > t.clientWidth + 1)) cramped.push(section.name);
      await screenshot(page, `layout-${width}-${section.name}`);
    }
    const report = (m: Measure) => `${m.path.replace("/t/acme", "") || "/"}=${m.scrollWidth}${m.tables.map((t) => ` [table ${t.scrollWidth}/${t.clientWidth} ${t.scrollWidth > t.clientWidth + 1 ? t.cols : ""}]`).join("")}`;
    console.log(`layout ${width}px: ${measured.map(report).join(" ")}`);
    expect(measured.filter((m) => m.scrollWidth > m.innerWidth + 1)).toEqual([]);
    expect(cramped).toEqual([]);
    // Every page names itself in its tab ("Reconcile · Tollgate"); the decided approvals share the list's.
    expect(titles).toEqual([
      "Overview", "Operations", `Operation ${mix.succeeded[0]!.operationId}`, "Reconcile", "Tools", "Audit log", "Users", "Approvals", "Approvals", "Inbox",
      "Subscriptions", "API keys",
    ].map((t) => `${t} · Tollgate`));
    await context.close();
  });
});

describe("phone width (390 px)", () => {
  it("the sidebar becomes a top bar, content takes the full width, and key-value fields stack", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await addSession(context, app.baseUrl, admin);
    const page = await context.newPage();
    await open(page, `/operations/${mix.succeeded[0]!.operationId}`);
    const main = (await page.locator("main").boundingBox())!;
    const nav = (await page.getByRole("navigation", { name: "Console sections" }).boundingBox())!;
    // The sections sit above the content, not beside it.
    expect(nav.y + nav.height).toBeLessThanOrEqual(main.y + 1);
    expect(main.width).toBeGreaterThanOrEqual(389);
    // Every section link can be reached: in view, or inside the bar's own horizontal scroller.
    for (const link of await page.getByRole("navigation", { name: "Console sections" }).getByRole("link").all()) {
      await link.scrollIntoViewIfNeeded();
      const box = (await link.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(-1);
      expect(box.x + box.width).toBeLessThanOrEqual(391);
    }
    // A trace field's label sits above its value, which has the full width to wrap in.
    const fields = page.locator("dl.kv.t-fields").first();
    const dt = (await fields.locator("dt").first().boundingBox())!;
    const dd = (await fields.locator("dd").first().boundingBox())!;
    expect(dd.y).toBeGreaterThanOrEqual(dt.y + dt.height - 1);
    expect(dd.width).toBeGreaterThan(200);
    await screenshot(page, "layout-390-trace-top");
    await context.close();
  });
});

describe("laptop width (1280 px)", () => {
  it("every tool's Edit button is on screen without scrolling sideways", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await addSession(context, app.baseUrl, admin);
    const page = await context.newPage();
    await open(page, "/tools");
    const buttons = await page.locator("table.tools-table tbody").getByRole("button", { name: /^Edit/ }).all();
    expect(buttons.length).toBe(await page.locator("table.tools-table tbody tr").count());
    expect(buttons.length).toBeGreaterThanOrEqual(4);
    for (const button of buttons) {
      const box = (await button.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(1280);
    }
    await context.close();
  });

  it("decided approvals show By and Reason, and audit actions are readable, inside the window", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await addSession(context, app.baseUrl, admin);
    const page = await context.newPage();
    await open(page, "/approvals?view=decided");
    for (const name of ["By", "Reason"]) {
      const box = (await page.locator("table.approvals-table thead th", { hasText: new RegExp(`^${name}$`) }).boundingBox())!;
      expect(box.x + box.width, name).toBeLessThanOrEqual(1280);
    }
    // The reason wraps rather than being cut.
    expect(await page.locator("table.approvals-table tbody").textContent()).toContain(LONG_REASON);

    await open(page, "/audit");
    const chips = page.locator("table.audit-table a.action-chip");
    expect(await chips.count()).toBeGreaterThan(0);
    for (const chip of await chips.all()) {
      // Not cut: the chip's text fits in its box.
      const [scroll, client] = await chip.evaluate((el) => [el.scrollWidth, el.clientWidth]);
      expect(scroll, await chip.textContent() ?? "").toBeLessThanOrEqual(client + 1);
    }
    await context.close();
  });

  it("a long email stays inside the sidebar", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await addSession(context, app.baseUrl, admin);
    const page = await context.newPage();
    await open(page, "/approvals");
    const sidebar = (await page.locator("aside.sidebar").boundingBox())!;
    const email = page.locator(".sidebar-foot [title]", { hasText: admin.email.slice(0, 12) }).first();
    expect(await email.getAttribute("title")).toContain(admin.email);
    const box = (await email.boundingBox())!;
    // Wrapped within the sidebar, or cut there with an ellipsis (the full address is the title).
    expect(box.x + box.width).toBeLessThanOrEqual(sidebar.x + sidebar.width);
    await context.close();
  });
});
