import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { createConsoleUser, focusedText, launchBrowser, openSignedIn, screenshot, type ConsoleLogin } from "../support/browser";
import { call, claim } from "../support/http";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// Issue 6 in a real browser: an agent asks twice for the same refund, the second time under a
// NEW Idempotency-Key (the classic bug). The approver sees the duplicate-intent warning on the
// second request, rejects it with a reason, approves the first; the agent's next claim of the
// first gets 201 and the second 403 forever. Every step is checked against the database too.

let app: TestApp;
let browser: Browser;
let acme: TenantKeys;
let approver: ConsoleLogin;
let viewer: ConsoleLogin;
const TOOL = "payments.refund";
const ARGS = { amount: 4200, currency: "eur", charge: "ch_3PqL", reason: "requested_by_customer" };
const FIRST_KEY = "refund-ch_3PqL-attempt-1";
const SECOND_KEY = "refund-ch_3PqL-attempt-2";
let first: { operationId: string; approvalId: string };
let second: { operationId: string; approvalId: string };

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  const [launched, tool] = await Promise.all([
    launchBrowser(),
    call(app.baseUrl, "PUT", `/api/v1/tools/${TOOL}`, {
      key: acme.admin,
      body: { description: "Refund a card payment", annotations: { destructiveHint: true, openWorldHint: true, idempotentHint: false }, policy: { approval: "required", approvalTtlSeconds: 7200 } },
    }),
  ]);
  browser = launched;
  expect(tool.status, tool.text).toBe(201);
  const ask = async (key: string) => {
    const res = await claim(app.baseUrl, acme.agent, key, { tool: TOOL, args: ARGS, workflowId: "wf-support-881" });
    expect(res.status, res.text).toBe(202);
    return { operationId: res.body.operationId as string, approvalId: res.body.approval.id as string };
  };
  first = await ask(FIRST_KEY);
  second = await ask(SECOND_KEY);
  approver = await createConsoleUser(app.db, { role: "approver", tenants: ["acme"] });
  viewer = await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] });
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const newPage = async (login: ConsoleLogin, pagePath: string): Promise<Page> =>
  openSignedIn(await browser.newContext({ viewport: { width: 1440, height: 900 } }), app.baseUrl, login, pagePath);

async function openApprovals(page: Page): Promise<void> {
  await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: /^Approvals/ }).click();
  await page.waitForURL((url) => url.pathname === "/t/acme/approvals");
  await page.locator("table.approvals-table").waitFor();
}


describe("approvals (approver)", () => {
  it("lists both requests oldest first with a countdown and a pending count in the sidebar", async () => {
    const page = await newPage(approver, "/t/acme");
    await openApprovals(page);
    const nav = page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: /^Approvals/ });
    expect(await nav.textContent()).toContain("2");
    const rows = page.locator("table.approvals-table tbody tr");
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).getByRole("link", { name: "Review" }).getAttribute("href")).toBe(`/t/acme/approvals/${first.approvalId}`);
    expect(await rows.nth(0).textContent()).toMatch(/acme-agent.*wf-support-881/);
    expect(await rows.nth(0).locator("time[title^='Expires']").textContent()).toMatch(/left$/);
    await screenshot(page, "approvals-queue");
    await page.context().close();
  });

  it("shows the duplicate-intent warning on the second request, which the approver rejects with a reason", async () => {
    const page = await newPage(approver, `/t/acme/approvals/${second.approvalId}`);
    await expect.poll(() => page.locator("h1").textContent()).toContain(TOOL);
    for (const badge of ["destructive", "open-world", "not idempotent"]) {
      expect(await page.getByLabel("Tool annotations").getByText(badge, { exact: true }).count()).toBe(1);
    }
    const warning = page.locator(".duplicate-intent");
    await warning.waitFor();
    expect(await warning.textContent()).toContain("Possible duplicate intent");
    expect(await warning.getByRole("link", { name: first.operationId }).count()).toBe(1);
    expect(await warning.textContent()).toContain("identical arguments");
    expect(await page.locator("pre.json").textContent()).toContain('"charge": "ch_3PqL"');
    await screenshot(page, "approval-duplicate-intent");

    // Reject without a reason: the form says why and nothing is sent.
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("alert").filter({ hasText: "Say why" }).waitFor();
    expect((await app.db.approval.findUniqueOrThrow({ where: { id: second.approvalId } })).state).toBe("pending");

    await page.getByLabel(/^Reason/).fill("Duplicate of the first refund request (new key minted on retry)");
    await page.getByRole("button", { name: "Reject" }).click();
    await page.getByRole("heading", { name: "Decision", exact: true }).waitFor();
    expect(await page.locator(".approval-page").textContent()).toContain("Duplicate of the first refund request");
    // The form (and the button that had focus) left the page: focus is on what was recorded.
    expect(await focusedText(page)).toContain("Rejected. Every claim under this key now gets 403 approval-rejected.");
    await screenshot(page, "approval-rejected");
    const stored = await app.db.approval.findUniqueOrThrow({ where: { id: second.approvalId } });
    expect(stored).toMatchObject({ state: "rejected", decidedBy: `user:${approver.email}`, reason: "Duplicate of the first refund request (new key minted on retry)" });
    await page.context().close();
  });

  it("approves the first; the agent then gets 201 for it and 403 for the rejected one, and both decisions are on the traces", async () => {
    const page = await newPage(approver, "/t/acme/approvals");
    await page.locator("table.approvals-table").waitFor();
    expect(await page.locator("table.approvals-table tbody tr").count()).toBe(1);
    await page.getByRole("link", { name: "Review" }).click();
    await page.waitForURL((url) => url.pathname === `/t/acme/approvals/${first.approvalId}`);
    // The rejected twin still counts as a possible duplicate of this one.
    expect(await page.locator(".duplicate-intent").textContent()).toContain(second.operationId);
    await page.getByLabel(/^Reason/).fill("Customer confirmed the refund by phone");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByRole("heading", { name: "Decision", exact: true }).waitFor();
    expect(await page.locator(".approval-page").textContent()).toContain("approved");
    expect(await focusedText(page)).toContain("Approved. The agent's next claim under this key runs the tool");

    const granted = await claim(app.baseUrl, acme.agent, FIRST_KEY, { tool: TOOL, args: ARGS, workflowId: "wf-support-881" });
    expect(granted.status, granted.text).toBe(201);
    const refused = await claim(app.baseUrl, acme.agent, SECOND_KEY, { tool: TOOL, args: ARGS, workflowId: "wf-support-881" });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("approval-rejected");
    expect((await app.db.operation.findUniqueOrThrow({ where: { id: first.operationId } })).state).toBe("processing");

    await page.goto(`${app.baseUrl}/t/acme/operations/${first.operationId}`);
    const timeline = page.getByRole("list", { name: "Operation timeline" });
    await timeline.waitFor();
    expect(await timeline.textContent()).toMatch(/Approval approved/);
    await screenshot(page, "approval-approved-trace");
    await page.goto(`${app.baseUrl}/t/acme/approvals?view=decided`);
    expect(await page.locator("table.approvals-table tbody tr").count()).toBe(2);
    // When each was decided, beside who decided it.
    expect(await page.locator("table.approvals-table tbody tr").first().locator("td.decision time").textContent()).toMatch(/ago$/);
    await screenshot(page, "approvals-decided");
    await page.context().close();
  });

  it("an approver who loses the race is told the decision was not recorded, and who decided what", async () => {
    const asked = await claim(app.baseUrl, acme.agent, "race-case", { tool: TOOL, args: { ...ARGS, amount: 11 } });
    expect(asked.status, asked.text).toBe(202);
    const approvalId: string = asked.body.approval.id;
    const page = await newPage(approver, `/t/acme/approvals/${approvalId}`);
    await page.getByLabel(/^Reason/).fill("Not this one");
    // Another approver decides first, through the API, while this page is open.
    const other = await call(app.baseUrl, "POST", `/api/v1/approvals/${approvalId}/decision`, { key: acme.approver, body: { decision: "approve" } });
    expect(other.status, other.text).toBe(200);

    await page.getByRole("button", { name: "Reject" }).click();

    const alert = page.getByRole("alert").filter({ hasText: "was not recorded" });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^Your rejection was not recorded: this request was already approved by api-key:/);
    // The form that had focus is gone; the news that it did nothing has it.
    await expect.poll(() => focusedText(page)).toMatch(/^Your rejection was not recorded/);
    await screenshot(page, "approval-race-not-recorded");
    expect(await app.db.approval.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ state: "approved", reason: null });
    await page.context().close();
  });

  it("an approver whose page predates a flag is told so, shown the flag, and nothing is approved", async () => {
    const asked = await claim(app.baseUrl, acme.agent, "flag-case", { tool: TOOL, args: { ...ARGS, amount: 12 } });
    expect(asked.status, asked.text).toBe(202);
    const approvalId: string = asked.body.approval.id;
    const page = await newPage(approver, `/t/acme/approvals/${approvalId}`);
    await page.getByRole("button", { name: "Approve" }).waitFor();
    expect(await page.locator(".operation-flag").count()).toBe(0);
    // While the page is open, a provider's event says the refund happened (as the webhook ingest flags it).
    await app.db.$executeRaw`UPDATE operation SET flagged_at = now(), flag_reason = 'webhook evt_1 says it succeeded, but it has not run yet (awaiting approval)' WHERE id = ${asked.body.operationId}`;

    await page.getByRole("button", { name: "Approve" }).click();

    const refused = page.getByRole("alert").filter({ hasText: "flagged since you opened this approval" });
    await refused.waitFor();
    await page.locator(".operation-flag").filter({ hasText: "webhook evt_1 says it succeeded" }).waitFor();
    await screenshot(page, "approval-flag-since-opened");
    expect(await app.db.approval.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ state: "pending", decidedBy: null });
    await page.context().close();
  });

  it("a viewer reads approvals but gets no decision form", async () => {
    const tool = await claim(app.baseUrl, acme.agent, "viewer-case", { tool: TOOL, args: { ...ARGS, amount: 10 } });
    expect(tool.status).toBe(202);
    const page = await newPage(viewer, `/t/acme/approvals/${tool.body.approval.id}`);
    await expect.poll(() => page.locator(".approval-page").textContent()).toContain("deciding needs an approver");
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await page.context().close();
  });
});
