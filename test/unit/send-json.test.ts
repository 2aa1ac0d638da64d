import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { problemLine, sendJson } from "@/app/t/[tenant]/_components/send-json";

// What a console form tells a person after a change the server did not confirm: "Nothing was
// changed" only when that is known (a 4xx, a 503 saying nothing was stored); when the change may
// have been saved (the connection failed, another 5xx), it says to look first (review, 2026-12-01).

let server: Server;
let base: string;
const answers: Record<string, { status: number; detail: string }> = {
  "/conflict": { status: 409, detail: "Already decided by someone else." },
  "/refused": { status: 503, detail: "The database could not serve this request (the database refused the connection); nothing was stored. Retry it." },
  "/in-doubt": { status: 503, detail: "The database could not confirm this request (the connection to the database was reset); it may or may not have been recorded." },
  "/broken": { status: 500, detail: "An unexpected error occurred." },
};

beforeAll(async () => {
  server = createServer((req, res) => {
    // Never answers (a request stuck on the server): the socket is closed only by the client.
    if (req.url === "/silent") return;
    const answer = answers[req.url ?? ""];
    if (!answer) return void res.end('{"ok":true}');
    res.writeHead(answer.status, { "content-type": "application/problem+json" }).end(JSON.stringify({ status: answer.status, detail: answer.detail }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("sendJson and problemLine", () => {
  it.each([
    ["/conflict", false, "Already decided by someone else. Nothing was changed."],
    ["/refused", false, "nothing was stored. Retry it. Nothing was changed."],
    ["/in-doubt", true, "may or may not have been recorded. It may or may not have been saved: look at what is stored before trying again."],
    ["/broken", true, "An unexpected error occurred. It may or may not have been saved: look at what is stored before trying again."],
  ])("%s: in doubt %s", async (path, inDoubt, line) => {
    const res = await sendJson(`${base}${path}`, "POST", { reason: "r" });
    if (res.ok) throw new Error("expected a failure");
    expect(res.inDoubt).toBe(inDoubt);
    expect(problemLine(res, "Nothing was changed.")).toContain(line);
  });

  // The inbox's match dialog has no field for the operation id the server refused: the line said
  // "One field needs a change" with nothing marked, and the server's reason was lost.
  it("points at the fields when the form shows every one refused, and says the server's detail when it does not", () => {
    const res = { detail: "operationId: No such operation in this tenant", fields: { operationId: "No such operation in this tenant" }, inDoubt: false };
    expect(problemLine(res, "Nothing was changed.")).toBe("operationId: No such operation in this tenant. Nothing was changed.");
    expect(problemLine(res, "Nothing was changed.", ["operationId"])).toBe("One field needs a change. Nothing was changed.");
    const two = { ...res, fields: { ...res.fields, reason: "Required" } };
    expect(problemLine(two, "Nothing was changed.", ["reason"])).toBe("operationId: No such operation in this tenant. Nothing was changed.");
    expect(problemLine(two, "Nothing was changed.", ["reason", "operationId"])).toBe("2 fields need a change. Nothing was changed.");
  });

  it("a connection that fails before an answer is in doubt: the request may have reached the server", async () => {
    const res = await sendJson(`${base.replace(/:\d+$/, ":1")}/x`, "POST", {});
    if (res.ok) throw new Error("expected a failure");
    expect([res.status, res.inDoubt]).toEqual([0, true]);
    expect(problemLine(res, "Nothing was changed.")).toBe("The server could not be reached. It may or may not have been saved: look at what is stored before trying again.");
  });

  // Review, 2026-12-01: a busy dialog cannot be closed, so an answer that never came kept it open
  // (and the page behind it inert) until a reload.
  it("a request the server never answers ends after the form's wait: in doubt, and the form is free again", async () => {
    const started = Date.now();
    const res = await sendJson(`${base}/silent`, "POST", {}, { withinMs: 300 });
    if (res.ok) throw new Error("expected a failure");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect([res.status, res.inDoubt]).toEqual([0, true]);
    expect(problemLine(res, "Nothing was changed.")).toBe("The server did not answer within 300 ms. It may or may not have been saved: look at what is stored before trying again.");
  });
});
