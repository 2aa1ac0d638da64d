import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listOperations } from "@/lib/console/list-operations";
import { loadOperationsQuery, viewQueryString } from "@/lib/console/operations-query";
import { getOperationTrace } from "@/lib/console/operation-trace";
import { overviewStats } from "@/lib/console/overview-stats";
import { createConsoleUser } from "../support/browser";
import { signInConsole, type ConsoleClient } from "../support/console-session";
import { call, claim } from "../support/http";
import { expectProblem } from "../support/protocol";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";

// Flagged operations (evidence that contradicts the recorded outcome) were visible only on their
// own trace and a flag could never be taken down (console review). They are a filter of the
// operations list and a count on the overview, and an operator who checked clears a flag with a
// reason: compare-and-set on the flag read, audited, shown on the trace; the outcome untouched.

let app: TestApp;
let acme: TenantKeys;
let globex: TenantKeys;
let operator: ConsoleClient;
let viewer: ConsoleClient;
const TOOL = "tickets.create";

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
  for (const keys of [acme, globex]) {
    const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${TOOL}`, { key: keys.admin, body: { policy: { takeover: "never" } } });
    expect([200, 201], res.text).toContain(res.status);
  }
  operator = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "operator", tenants: ["acme"] }));
  viewer = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] }));
});
afterAll(async () => {
  await app?.stop();
});

// An operation that succeeded and whose attempt then said it failed: flagged, still succeeded.
async function flaggedOperation(keys: TenantKeys = acme): Promise<string> {
  const claimed = await claim(app.baseUrl, keys.agent, `idem-${randomUUID()}`, { tool: TOOL, args: { title: "Printer on fire" } });
  expect(claimed.status, claimed.text).toBe(201);
  const { operationId } = claimed.body;
  const complete = (outcome: string) =>
    call(app.baseUrl, "POST", `/api/v1/operations/${operationId}/complete`, { key: keys.agent, body: { fencingToken: claimed.body.attempt.fencingToken, outcome } });
  expect((await complete("succeeded")).status).toBe(200);
  expect((await complete("failed")).status).toBe(409);
  return operationId;
}

const operation = (id: string) => app.db.operation.findUniqueOrThrow({ where: { id } });
const clear = (client: ConsoleClient, id: string, body: Record<string, unknown>) => client.post(`/api/console/acme/operations/${id}/clear-flag`, body);

describe("flagged operations in the console", () => {
  it("the operations list filters by them (flagged=true), marks them, and counts them on the overview; another tenant's stay out", async () => {
    const flagged = [await flaggedOperation(), await flaggedOperation()];
    await flaggedOperation(globex);
    const plain = await claim(app.baseUrl, acme.agent, `idem-${randomUUID()}`, { tool: TOOL, args: { title: "fine" } });
    expect(plain.status).toBe(201);

    const page = await listOperations({ db: app.db, tenantId: acme.tenantId, query: loadOperationsQuery("?flagged=true") });

    expect(page.rows.map((r) => r.id).sort()).toEqual([...flagged].sort());
    expect(page.rows.every((r) => r.flagged && r.state === "succeeded")).toBe(true);
    expect(page.total).toEqual({ kind: "exact", n: 2 });
    const all = await listOperations({ db: app.db, tenantId: acme.tenantId, query: loadOperationsQuery("") });
    expect(all.rows.find((r) => r.id === plain.body.operationId)?.flagged).toBe(false);
    expect((await overviewStats({ db: app.db, tenantId: acme.tenantId })).flagged).toEqual({ value: 2, capped: false });
    const html = await viewer.request("GET", "/t/acme/operations?flagged=true");
    expect(html.status).toBe(200);
    expect(html.text).toContain(flagged[0]);
    // The spellings people type filter the same; "0" means off, and what does not parse is absent.
    for (const spelling of ["1", "yes", "on", "TRUE"]) {
      const list = await listOperations({ db: app.db, tenantId: acme.tenantId, query: loadOperationsQuery(`?flagged=${spelling}`) });
      expect(list.rows.map((r) => r.id).sort(), spelling).toEqual([...flagged].sort());
    }
    for (const spelling of ["0", "maybe"]) {
      expect(loadOperationsQuery(`?flagged=${spelling}&conflicts=${spelling}`)).toMatchObject({ flagged: false, conflicts: false });
    }
    expect(loadOperationsQuery("?conflicts=1").conflicts).toBe(true);
    expect(viewQueryString(loadOperationsQuery("?flagged=1"))).toBe("flagged=true");
  });

  it("an operator clears a flag with a reason: the outcome stays, the trace says who and why, and a second clear is refused", async () => {
    const id = await flaggedOperation();
    const before = await operation(id);
    expect(before.flaggedAt).not.toBeNull();

    const res = await clear(operator, id, { flaggedAt: before.flaggedAt!.toISOString(), reason: "checked Zendesk: the ticket exists" });

    expect(res.status, res.text).toBe(200);
    const after = await operation(id);
    expect(after).toMatchObject({ state: "succeeded", result: before.result, flaggedAt: null, flagReason: null });
    const audits = await app.db.auditEvent.findMany({ where: { targetId: id, action: "operation.flag_cleared" } });
    expect(audits).toMatchObject([{ actor: expect.stringMatching(/^user:operator-/), reason: "checked Zendesk: the ticket exists", before: { flagReason: before.flagReason } }]);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: id });
    expect(trace?.timeline.filter((e) => e.kind === "flag").map((e) => e.title)).toEqual([
      "Flagged: attempt 1 reported failed after it had reported succeeded",
      "Flag cleared",
    ]);
    expect((await listOperations({ db: app.db, tenantId: acme.tenantId, query: loadOperationsQuery("?flagged=true") })).rows.map((r) => r.id)).not.toContain(id);

    expectProblem(await clear(operator, id, { flaggedAt: before.flaggedAt!.toISOString(), reason: "again" }), 409, "invalid-state");
  });

  it("refuses, changing nothing: a viewer (403), no reason (400), a flag raised again since it was read (409), another tenant's operation (404)", async () => {
    const id = await flaggedOperation();
    const { flaggedAt } = await operation(id);
    const read = flaggedAt!.toISOString();
    const foreign = await flaggedOperation(globex);
    const auditCount = () => app.db.auditEvent.count({ where: { action: "operation.flag_cleared" } });
    const audited = await auditCount();

    expectProblem(await clear(viewer, id, { flaggedAt: read, reason: "looks fine" }), 403, "forbidden");
    expectProblem(await clear(operator, id, { flaggedAt: read, reason: "  " }), 400, "invalid-request");
    expectProblem(await clear(operator, id, { flaggedAt: new Date(flaggedAt!.getTime() - 1000).toISOString(), reason: "looks fine" }), 409, "invalid-state");
    expectProblem(await clear(operator, foreign, { flaggedAt: read, reason: "looks fine" }), 404, "operation-not-found");

    // A NULL flag time (only the SQL can be handed one) never clears a flag unseen.
    const [sql] = await app.db.$queryRaw<{ r: { code: string } }[]>`SELECT tollgate_clear_flag(${acme.tenantId}, ${id}, NULL, 'x', 'test') AS r`;
    expect(sql?.r.code).toBe("flag-changed");
    expect((await operation(id)).flaggedAt).toEqual(flaggedAt);
    expect((await operation(foreign)).flaggedAt).not.toBeNull();
    expect(await auditCount()).toBe(audited);
  });
});

// Console review, 2026-12-01 night: the trace of a processing operation whose lease expired told
// the operator that retries get 409 outcome-unknown, while its tool (takeover "deduplicated")
// let the next claim take over as a new attempt.
describe("an operation whose lease expired, on its trace page", () => {
  it.each([
    { takeover: "deduplicated", says: "takes over as attempt 2 with the same key", not: "409 outcome-unknown" },
    { takeover: "never", says: "agents retrying it get <code>409 outcome-unknown</code>", not: "takes over" },
  ])("with takeover $takeover says what the next claim does", async ({ takeover, says, not }) => {
    const tool = `tickets.lease-${takeover}`;
    const put = await call(app.baseUrl, "PUT", `/api/v1/tools/${tool}`, { key: acme.admin, body: { policy: { takeover, leaseSeconds: 1, maxAttempts: 3 } } });
    expect([200, 201], put.text).toContain(put.status);
    const claimed = await claim(app.baseUrl, acme.agent, `idem-${randomUUID()}`, { tool, args: { title: "stalled" } });
    expect(claimed.status, claimed.text).toBe(201);
    await app.db.$executeRaw`UPDATE operation SET lease_expires_at = now() - interval '1 minute' WHERE id = ${claimed.body.operationId}`;
    await app.db.$executeRaw`UPDATE attempt SET started_at = now() - interval '61 seconds', lease_expires_at = now() - interval '1 minute' WHERE operation_id = ${claimed.body.operationId}`;

    const html = (await operator.request("GET", `/t/acme/operations/${claimed.body.operationId}`)).text;

    expect(html).toContain("Lease expired without a report.");
    expect(html.replace(/<!-- -->/g, "")).toContain(says);
    expect(html).not.toContain(not);
    const trace = await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: claimed.body.operationId });
    const whatNow = trace!.timeline.find((e) => e.kind === "attempt.lease-expired")!.fields.find((f) => f.label === "What now")!.value;
    expect(whatNow).toContain(takeover === "deduplicated" ? "the next claim of its key takes over" : "check the provider, then resolve");

    // Settled much later: the attempt's end says how long its lease held, not "Ran for" the
    // whole time until the resolve closed it.
    const resolved = await call(app.baseUrl, "POST", `/api/v1/operations/${claimed.body.operationId}/resolve`, {
      key: acme.admin,
      body: { outcome: "failed", reason: "nothing at the provider" },
    });
    expect(resolved.status, resolved.text).toBe(200);
    const ended = (await getOperationTrace({ db: app.db, tenantId: acme.tenantId, operationId: claimed.body.operationId }))!.timeline.find((e) => e.kind === "attempt.end")!;
    expect(ended.title).toBe("Attempt 1 lost its lease");
    expect(ended.fields.map((f) => f.label)).not.toContain("Ran for");
    expect(ended.fields.find((f) => f.label === "Lease held for")?.value).toBe("1.0 s; how long the call ran is unknown");
  });
});
