import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { startTestApp, type TestApp } from "../support/test-app";

// What never reaches a route (lib/http/front-door.cjs): Node's parser refusals and the methods
// Next.js answers itself were empty 400s and 431s and, for TRACE, a plain-text 500. Each is a
// problem+json now, and counted. Sent over a raw socket: fetch refuses these methods and headers.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});

type RawReply = { status: number; headers: Map<string, string>; body: unknown };

// Writes `request` as it is and reads until the server closes the connection.
function raw(request: string): Promise<RawReply> {
  const { hostname, port } = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", ...rest] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      const bodyText = rest.join("\r\n\r\n");
      let body: unknown = bodyText;
      try {
        body = JSON.parse(bodyText);
      } catch {
        // not JSON: the assertions below say so
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
    });
  });
}

function expectProblem(reply: RawReply, status: number, code: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.headers.get("content-type")).toBe("application/problem+json");
  expect(reply.body).toMatchObject({ type: `urn:tollgate:problem:${code}`, status, code });
  expect((reply.body as { detail: string }).detail.length).toBeGreaterThan(10);
}

async function beforeRoutingCount(status: string): Promise<number> {
  const text = (await call(app.baseUrl, "GET", "/api/metrics")).text;
  const line = text.split("\n").find((l) => l.startsWith("tollgate_http_requests_total{") && l.includes('route="(before routing)"') && l.includes(`status="${status}"`));
  return line ? Number(line.split(" ").pop()) : 0;
}

describe("requests Next.js never routes", () => {
  it("a WebDAV method (PROPFIND) is a problem+json 501, not an empty 400", async () => {
    const reply = await raw("PROPFIND /api/v1/operations HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expectProblem(reply, 501, "unsupported-method");
    expect((reply.body as { detail: string }).detail).toContain("PROPFIND");
  });

  it("TRACE is a problem+json 501, not a plain-text 500", async () => {
    expectProblem(await raw("TRACE /api/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 501, "unsupported-method");
  });

  it("a method name Node's parser does not know is a 501 and closes the connection", async () => {
    const reply = await raw("BREW /api/live HTTP/1.1\r\nHost: x\r\n\r\n");
    expectProblem(reply, 501, "unsupported-method");
    expect(reply.headers.get("connection")).toBe("close");
  });

  it("bytes that are not HTTP at all (a TLS handshake on the plain port) are a 400, not a 501", async () => {
    expectProblem(await raw("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"), 400, "invalid-request");
  });

  it("CONNECT is a 501 too", async () => {
    expectProblem(await raw("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), 501, "unsupported-method");
  });

  it("headers over 16 KiB are a problem+json 431, not an empty one", async () => {
    const reply = await raw(`GET /api/live HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(17 * 1024)}\r\n\r\n`);
    expectProblem(reply, 431, "request-header-too-large");
    expect(reply.headers.get("connection")).toBe("close");
  });

  it("a request Node cannot parse (a header line without a colon) is a problem+json 400", async () => {
    expectProblem(await raw("GET /api/live HTTP/1.1\r\nHost x\r\n\r\n"), 400, "invalid-request");
  });

  it("counts what it refused, and the server goes on serving", async () => {
    await call(app.baseUrl, "GET", "/api/live"); // the app's metrics exist once a route has run
    const before = await beforeRoutingCount("501");
    await raw("PROPFIND / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await raw("BREW / HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(await beforeRoutingCount("501")).toBe(before + 2);
    const live = await call(app.baseUrl, "GET", "/api/live");
    expect(live.status).toBe(200);
  });
});
