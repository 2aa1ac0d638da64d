import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, seedTenant, type TestApp, type TenantKeys } from "../support/test-app";
import { createConsoleUser } from "../support/browser";
import { anonymousConsole, signInConsole, type ConsoleClient } from "../support/console-session";

let app: TestApp;
let acme: TenantKeys;
let globex: TenantKeys;
let viewer: ConsoleClient;

// Operations inserted in bulk (the export reads, it does not care how they were made): every
// third one failed, the rest succeeded; one carries a workflow id that needs CSV quoting and
// would run as a formula in a spreadsheet.
async function insertOperations(tenantId: string, count: number, prefix: string): Promise<void> {
  await app.db.$executeRawUnsafe(`
    INSERT INTO operation (id, tenant_id, principal, tool, key_digest, fingerprint, args, state, max_attempts, attempt_count,
      downstream_key, result_expires_at, completed_at, created_at, updated_at)
    SELECT '${prefix}' || g, '${tenantId}', 'bot', 'tickets.create', md5('${prefix}' || g) || md5('k' || g), 'v1:' || md5('f' || g), '{}'::jsonb,
      CASE WHEN g % 3 = 0 THEN 'failed' ELSE 'succeeded' END::operation_state, 3, 1, 'dk_${prefix}' || g,
      now() + interval '1 day', now(), now() - make_interval(secs => g), now() - make_interval(secs => g)
    FROM generate_series(1, ${count}) g`);
}

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  globex = await seedTenant(app.db, "globex");
  await insertOperations(acme.tenantId, 2500, "op_acme_");
  await insertOperations(globex.tenantId, 10, "op_globex_");
  await app.db.$executeRaw`UPDATE operation SET workflow_id = ${'=HYPERLINK("x"),a'} WHERE id = 'op_acme_1'`;
  viewer = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "viewer", tenants: ["acme"] }));
});
afterAll(async () => {
  await app?.stop();
});

function parseCsvLines(text: string): string[] {
  expect(text.endsWith("\r\n")).toBe(true);
  return text.slice(0, -2).split("\r\n");
}

describe("CSV export of the operations table", () => {
  it("streams every operation of the tenant, and only of the tenant, as an attachment", async () => {
    const res = await viewer.request("GET", "/api/console/acme/operations/export");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename=/);
    const lines = parseCsvLines(res.text);
    expect(lines[0]?.split(",")[0]).toBe("id");
    const ids = lines.slice(1).map((l) => l.split(",")[0]);
    expect(ids).toHaveLength(2500);
    expect(new Set(ids).size).toBe(2500);
    expect(ids.some((id) => id?.startsWith("op_globex_"))).toBe(false);
  });

  it("applies the table's filters from the query string", async () => {
    const res = await viewer.request("GET", "/api/console/acme/operations/export?state=failed");
    const rows = parseCsvLines(res.text).slice(1);
    expect(rows).toHaveLength(833);
    const stateColumn = parseCsvLines(res.text)[0]!.split(",").indexOf("state");
    expect(rows.every((r) => r.split(",")[stateColumn] === "failed")).toBe(true);
  });

  it("a date filter PostgreSQL cannot take (year 0, a hand-edited URL) is ignored, not a 500; a real one applies", async () => {
    const ignored = await viewer.request("GET", "/api/console/acme/operations/export?state=failed&from=0000-06-01T00:00:00Z&to=-100000-01-01T00:00:00Z");
    expect(ignored.status, ignored.text.slice(0, 300)).toBe(200);
    expect(parseCsvLines(ignored.text).slice(1)).toHaveLength(833);
    const future = await viewer.request("GET", "/api/console/acme/operations/export?state=failed&from=9999-01-01T00:00:00Z");
    expect(future.status).toBe(200);
    expect(parseCsvLines(future.text).slice(1)).toHaveLength(0);
  });

  it("quotes separators and defuses spreadsheet formulas", async () => {
    const res = await viewer.request("GET", "/api/console/acme/operations/export");
    const line = parseCsvLines(res.text).find((l) => l.startsWith("op_acme_1,"));
    expect(line).toContain(`"'=HYPERLINK(""x""),a"`);
  });

  it("is refused to a visitor and hides other tenants", async () => {
    expect((await anonymousConsole(app.baseUrl).request("GET", "/api/console/acme/operations/export")).status).toBe(401);
    expect((await viewer.request("GET", "/api/console/globex/operations/export")).status).toBe(404);
    expect(globex.tenantId).toBeTruthy();
  });
});
