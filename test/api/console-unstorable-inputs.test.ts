import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser } from "../support/browser";
import { signInConsole, trySignIn, type ConsoleClient } from "../support/console-session";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { call, claim } from "../support/http";
import { createTool } from "../support/protocol";
import { sha256Hex } from "@/lib/crypto/digest";

// Hand-edited console URLs whose values the URL parsers accepted but PostgreSQL cannot take:
// U+0000 in text (filters, cursor ids, path ids), impossible dates in page cursors, an audit id
// past bigint. Console filters are forgiving: such a value is ignored (or the page is "not
// found"), never a 500 from the database. Every request goes through a real signed-in session.

let app: TestApp;
let admin: ConsoleClient;
let acme: TenantKeys;

const NUL = "\u0000";
const cursorOf = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString("base64url");

beforeAll(async () => {
  app = await startTestApp();
  acme = await seedTenant(app.db, "acme");
  admin = await signInConsole(app.baseUrl, await createConsoleUser(app.db, { role: "admin", tenants: ["acme"] }));
});
afterAll(async () => {
  await app?.stop();
});

// A console page. Pages with a loading.tsx stream: the 200 is sent before the page's queries
// run, and a query that fails shows up only in the stream (React's client-render instruction
// $RX, and an error's numeric digest in the flight data; notFound() has a named one), so both
// are looked for too.
async function get(path: string) {
  const res = await admin.request("GET", path);
  expect(res.status, `${path}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expect(res.text, `${path} failed while streaming`).not.toMatch(/\$RX\(|E\{\\?"digest\\?":\\?"\d/);
  return { ...res, path };
}

describe("console URL values PostgreSQL cannot store", () => {
  it("ignores text filters holding U+0000 on the operations table and its export", async () => {
    // A search cut at its 200 characters in the middle of an emoji keeps the whole characters before it.
    expect((await get(`/t/acme/operations?q=${encodeURIComponent(`${"x".repeat(199)}😀`)}`)).status).toBe(200);
    for (const key of ["q", "tool", "principal"]) {
      expect((await get(`/t/acme/operations?${key}=${encodeURIComponent(`a${NUL}b`)}`)).status).toBe(200);
      const csv = await get(`/api/console/acme/operations/export?${key}=%00`);
      expect(csv.status, csv.path).toBe(200);
      // The export streams: a query failing after the header would cut the body short.
      expect(csv.text, csv.path).toMatch(/^id,created_at,.*\r\n$/);
    }
  });

  it("ignores an operations cursor whose id holds U+0000 or whose time is no real date", async () => {
    for (const [at, id] of [["2024-01-01T00:00:00.000Z", NUL], ["2024-02-30T00:00:00.000Z", "op_1"]]) {
      const page = await get(`/t/acme/operations?after=${cursorOf(["created", "desc", at, id])}&page=2`);
      expect(page.status).toBe(200);
    }
  });

  it("ignores audit filters holding U+0000 and ids past the bigint maximum", async () => {
    for (const query of ["action=%00", "actor=user%3A%00", "target=%00", "type=operation&target=op%00", "before=9999999999999999999", "after=9223372036854775808"]) {
      expect((await get(`/t/acme/audit?${query}`)).status).toBe(200);
    }
    // The largest bigint is still a position.
    expect((await get("/t/acme/audit?before=9223372036854775807")).status).toBe(200);
  });

  it("starts the approvals queue from the top when its cursor's id holds U+0000", async () => {
    for (const view of ["pending", "decided"]) {
      expect((await get(`/t/acme/approvals?view=${view}&after=${cursorOf(["2024-01-01T00:00:00.000Z", NUL])}`)).status).toBe(200);
    }
  });

  it("treats reconcile and inbox cursors that are no real date, or whose id holds U+0000, as no cursor", async () => {
    const cursors = [
      "2024-13-45T99:99:99Z~op_1",
      "2024-02-30T00:00:00Z~op_1", // JavaScript rolls it over to March 1; PostgreSQL refuses it
      "2023-02-29T12:00:00.000Z~op_1",
      "0000-01-01T00:00:00Z~op_1",
      `2024-01-01T00:00:00.000Z~${NUL}`,
    ];
    for (const cursor of cursors) {
      for (const path of [`/t/acme/reconcile?after=`, `/t/acme/inbox?before=`]) {
        const page = await get(`${path}${encodeURIComponent(cursor)}`);
        expect(page.status).toBe(200);
        // Read as no cursor: the empty first page, not an empty page after (or before) a position.
        expect(page.text, page.path).toMatch(/Nothing to reconcile|Nothing in the inbox/);
      }
    }
    // Real cursors (2024 is a leap year) still page.
    const inbox = await get(`/t/acme/inbox?before=${encodeURIComponent("2024-02-29T12:00:00Z~evt_1")}`);
    expect(inbox.text).toContain("received before 2024-02-29 12:00:00 UTC");
    const queue = await get(`/t/acme/reconcile?after=${encodeURIComponent("2024-02-29T12:00:00.000Z~op_1")}`);
    expect(queue.text).toContain("No newer operations wait.");
  });

  // Next.js 16 hands pages the segment as sent ("%00"), which names nothing; the pages refuse a
  // decoded one themselves too, should that change.
  it("answers 404, not 500, for page paths whose id holds U+0000", async () => {
    for (const path of ["/t/acme/operations/%00", "/t/acme/operations/op%00x", "/t/acme/approvals/%00"]) {
      expect((await get(path)).status).toBe(404);
    }
  });

  // Route handlers get their parameters decoded by Next.js; withConsoleUser answers these (lib/http/path-params.ts).
  it("answers 404, not 500, for console changes whose path id holds U+0000", async () => {
    const changes: [string, string, unknown][] = [
      ["POST", "/api/console/acme/operations/op%00/resolve", { outcome: "failed", reason: "checked the provider" }],
      ["POST", "/api/console/acme/api-keys/key%00/revoke", { reason: "leaked" }],
      ["POST", "/api/console/acme/approvals/apr%00/decision", { decision: "approve" }],
      ["POST", "/api/console/acme/deliveries/dlv%00/redeliver", undefined],
      ["POST", "/api/console/acme/webhook-events/evt%00/ignore", { reason: "test noise" }],
      ["POST", "/api/console/acme/webhook-events/evt%00/match", { operationId: "op_1", outcome: "succeeded" }],
      ["DELETE", "/api/console/acme/saved-views/view%00", undefined],
      ["PATCH", "/api/console/acme/users/usr%00", { role: "viewer" }],
    ];
    for (const [method, path, body] of changes) {
      const res = await admin.request(method, path, { body });
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBe(404);
    }
  });
});

// A fuzz review of every route (2026-12-01, night) found these answered 500, or leaked the
// server's internals into a sign-in error.
describe("console inputs that were 500s", () => {
  it("refuses a flag time in year 0000 (zod takes it, PostgreSQL has no such year) with a 400", async () => {
    for (const flaggedAt of ["0000-01-01T00:00:00Z", "0000-12-31T23:59:59Z"]) {
      const res = await admin.post("/api/console/acme/operations/op_nope/clear-flag", { flaggedAt, reason: "checked" });
      expect([res.status, res.body?.code], res.text).toEqual([400, "invalid-request"]);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
    }
  });

  // Review, 2026-12-02: no length bound, and PostgreSQL refuses a unique-index entry past 2,704 bytes.
  it("refuses a user's email longer than RFC 5321's 254 characters with a 400, and stores no one", async () => {
    const before = await app.db.user.count();
    const local = Array.from({ length: 3000 }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(Math.random() * 36)]).join("");
    const res = await admin.post("/api/console/acme/users", { email: `${local}@example.test`, role: "viewer", password: "" });
    expect([res.status, res.body?.code], res.text).toEqual([400, "invalid-request"]);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await app.db.user.count()).toBe(before);
  });

  it("answers an operation id such as __proto__ in a bulk resolve as not found", async () => {
    const res = await admin.post("/api/console/acme/operations/resolve-bulk", {
      operationIds: ["__proto__", "constructor"],
      outcome: "failed",
      reason: "checked the provider",
      seenAttempts: {},
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: { status: string }) => r.status)).toEqual(["not-found", "not-found"]);
  });

  it("deletes a saved view once when the delete is sent many times at once: one 204, the rest 404", async () => {
    for (let round = 0; round < 5; round++) {
      const saved = await admin.post("/api/console/acme/saved-views", { name: `double click ${round}`, query: "?state=unknown" });
      expect(saved.status, saved.text).toBe(201);
      const answers = await Promise.all(Array.from({ length: 8 }, () => admin.request("DELETE", `/api/console/acme/saved-views/${saved.body.view.id}`)));
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join("\n")).toEqual([204, 404, 404, 404, 404, 404, 404, 404]);
      expect(answers.filter((a) => a.status === 404).every((a) => a.body?.code === "not-found")).toBe(true);
      expect(await app.db.auditEvent.count({ where: { targetId: saved.body.view.id, action: "saved-view.deleted" } })).toBe(1);
    }
  });

  // Security review: a raw key pasted into the search box was saved as typed, into the view and
  // the audit row every member of the tenant reads.
  it("saves a search that is an operation's raw Idempotency-Key as the key's digest, in the view and its audit row", async () => {
    const raw = `order-${randomUUID()}-SECRETISH`;
    const tool = await createTool(app.baseUrl, [acme], {}, "views.search");
    const claimed = await claim(app.baseUrl, acme.agent, raw, { tool, args: { n: 1 } });
    expect(claimed.status, claimed.text).toBe(201);
    const saved = await admin.post("/api/console/acme/saved-views", { name: `by key ${raw.slice(6, 14)}`, query: `?q=${encodeURIComponent(raw)}&state=processing` });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.body.view.query).toBe(`q=${sha256Hex(raw)}&state=processing`);
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: saved.body.view.id } });
    expect(JSON.stringify([audit.before, audit.after, audit.reason])).not.toContain("SECRETISH");
    // The digest finds the operation, as the raw key never did.
    const page = await admin.request("GET", `/t/acme/operations?${saved.body.view.query}`);
    expect(page.text).toContain(claimed.body.operationId);
    // A key longer than the search box's 200 characters (keys may have 255) is found whole.
    const long = `${"k".repeat(240)}-SECRETISH`;
    expect((await claim(app.baseUrl, acme.agent, long, { tool, args: { n: 3 } })).status).toBe(201);
    const savedLong = await admin.post("/api/console/acme/saved-views", { name: "by a long key", query: `q=${long}` });
    expect(savedLong.body.view.query).toBe(`q=${sha256Hex(long)}`);
    // Text the search shows an operation by (a workflow id) is kept as typed, even when it is also a key.
    const both = `wf-${randomUUID()}`;
    expect((await call(app.baseUrl, "POST", "/api/v1/operations", { key: acme.agent, idempotencyKey: both, body: { tool, args: { n: 2 }, workflowId: both } })).status).toBe(201);
    const kept = await admin.post("/api/console/acme/saved-views", { name: `by workflow ${both.slice(3, 11)}`, query: `q=${both}` });
    expect(kept.body.view.query).toBe(`q=${both}`);
  });

  it("saves a view whose search holds U+0000 (%00 in its query) without that search: 201, not 500", async () => {
    const saved = await admin.post("/api/console/acme/saved-views", { name: "nul search", query: "q=%00abc&state=unknown" });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.body.view.query).toBe("state=unknown");
  });

  it("refuses a saved view with a field it does not know (a misspelt query), and stores nothing", async () => {
    const before = await app.db.savedView.count();
    const res = await admin.post("/api/console/acme/saved-views", { name: "stuck", query: "", qeury: "state=unknown" });
    expect([res.status, res.body.code], res.text).toEqual([400, "invalid-request"]);
    expect(res.text).toContain("qeury");
    expect(await app.db.savedView.count()).toBe(before);
  });

  it("answers a next-auth POST whose JSON body does not parse, or is no object, with a 400", async () => {
    for (const path of ["/api/auth/session", "/api/auth/callback/credentials", "/api/auth/signout"]) {
      for (const rawBody of ["not json", "{", "[]", "null"]) {
        const res = await admin.request("POST", path, { rawBody, headers: { "content-type": "application/json" } });
        expect([res.status, res.body?.code], `${path} ${rawBody}: ${res.text.slice(0, 200)}`).toEqual([400, "invalid-request"]);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
      }
    }
  });

  it("refuses a sign-in whose email holds U+0000 as any unknown email, without the database's error in the answer", async () => {
    for (const email of [`a${NUL}b@example.test`, "a\ud800@example.test"]) {
      const tried = await trySignIn(app.baseUrl, email, "x");
      expect(tried).toEqual({ signedIn: false, error: "CredentialsSignin" });
    }
  });
});
