import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { problemBody, problemCodes, type ProblemCode } from "@/lib/http/problem";
import { metrics } from "@/lib/metrics/registry";

// lib/http/front-door.cjs is plain CommonJS (preloaded before anything is compiled), so it
// repeats the problem table's entries it answers with: they must stay the same.
const frontDoor = createRequire(import.meta.url)("../../lib/http/front-door.cjs") as {
  PROBLEMS: Record<string, { status: number; title: string }>;
  problemText(code: string, detail: string): string;
  parseFailure(error: { code?: string; rawPacket?: Buffer }): [string, string];
  SERVED: Set<string>;
  onClientError(error: { code?: string; rawPacket?: Buffer }, socket: FakeSocket): void;
  onConnect(req: unknown, socket: FakeSocket): void;
};

// What the front door does to a socket, recorded: what it wrote, and when it destroyed it.
type FakeSocket = ReturnType<typeof fakeSocket>;
function fakeSocket(inFlight?: { headersSent: boolean }) {
  const calls: string[] = [];
  const listeners: Record<string, unknown[]> = {};
  let written = "";
  let onWritten: (() => void) | undefined;
  return {
    writable: true,
    _httpMessage: inFlight,
    calls,
    listeners,
    written: () => written,
    flushed: () => onWritten?.(),
    on(event: string, listener: unknown) {
      (listeners[event] ??= []).push(listener);
      return this;
    },
    end(data: string, callback: () => void) {
      calls.push("end");
      written = data;
      onWritten = callback;
    },
    destroy() {
      calls.push("destroy");
    },
  };
}

describe("the front door's problems", () => {
  it("uses codes, statuses and titles of the problem table, and the same body", () => {
    for (const [code, entry] of Object.entries(frontDoor.PROBLEMS)) {
      expect(problemCodes[code as ProblemCode], code).toEqual(entry);
      expect(JSON.parse(frontDoor.problemText(code, "why"))).toEqual(problemBody(code as ProblemCode, "why"));
    }
  });

  it("maps Node's parser errors to a status", () => {
    expect(frontDoor.parseFailure({ code: "HPE_HEADER_OVERFLOW" })[0]).toBe("request-header-too-large");
    expect(frontDoor.parseFailure({ code: "ERR_HTTP_REQUEST_TIMEOUT" })[0]).toBe("request-timeout");
    expect(frontDoor.parseFailure({ code: "HPE_INVALID_METHOD", rawPacket: Buffer.from("BREW /pot HTTP/1.1\r\n") })[0]).toBe("unsupported-method");
    // A TLS handshake on the plain port is not a request with an odd method.
    expect(frontDoor.parseFailure({ code: "HPE_INVALID_METHOD", rawPacket: Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]) })[0]).toBe("invalid-request");
    expect(frontDoor.parseFailure({ code: "HPE_INVALID_METHOD" })[0]).toBe("invalid-request");
    expect(frontDoor.parseFailure({ code: "HPE_CHUNK_EXTENSIONS_OVERFLOW" })[0]).toBe("payload-too-large");
    expect(frontDoor.parseFailure({ code: "HPE_INVALID_CONSTANT" })[0]).toBe("invalid-request");
    expect(frontDoor.parseFailure({})[0]).toBe("invalid-request");
  });

  it("lets through exactly the methods routes serve", () => {
    expect([...frontDoor.SERVED].sort()).toEqual(["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"]);
  });
});

describe("the front door's sockets", () => {
  it("answers a parse error raw, then destroys the socket once the answer is written (http.Server keeps sockets half-open)", () => {
    const socket = fakeSocket();
    frontDoor.onClientError({ code: "HPE_HEADER_OVERFLOW" }, socket);
    expect(socket.written()).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(socket.written()).toContain("Connection: close\r\n");
    const body = socket.written().split("\r\n\r\n")[1]!;
    expect(socket.written()).toContain(`Content-Length: ${Buffer.byteLength(body)}\r\n`);
    expect(JSON.parse(body)).toMatchObject({ status: 431, code: "request-header-too-large" });
    expect(socket.calls).toEqual(["end"]);
    socket.flushed();
    expect(socket.calls).toEqual(["end", "destroy"]);
  });

  it("writes nothing on a socket whose answer has begun: it destroys it", () => {
    const socket = fakeSocket({ headersSent: true });
    frontDoor.onClientError({ code: "HPE_INVALID_CONSTANT" }, socket);
    expect(socket.written()).toBe("");
    expect(socket.calls).toEqual(["destroy"]);
  });

  it("gives a CONNECT's socket an error listener (Node hands it over without one) and closes it after the 501", () => {
    const socket = fakeSocket();
    frontDoor.onConnect({}, socket);
    expect(socket.listeners.error).toHaveLength(1);
    expect(socket.written()).toMatch(/^HTTP\/1\.1 501 Not Implemented\r\n/);
    socket.flushed();
    expect(socket.calls).toEqual(["end", "destroy"]);
  });

  it("counts refusals from before the app made its metrics once it does", async () => {
    const g = globalThis as { tollgateMetrics?: unknown; tollgateRefusedBeforeMetrics?: unknown };
    const saved = g.tollgateMetrics;
    g.tollgateMetrics = undefined;
    g.tollgateRefusedBeforeMetrics = undefined; // what the tests above refused
    try {
      frontDoor.onClientError({ code: "HPE_INVALID_CONSTANT" }, fakeSocket());
      frontDoor.onClientError({ code: "HPE_INVALID_CONSTANT" }, fakeSocket());
      expect(g.tollgateRefusedBeforeMetrics).toEqual({ 400: 2 });
      const counted = await metrics().httpRequests.get();
      expect(counted.values.find((v) => v.labels.route === "(before routing)" && v.labels.status === "400")?.value).toBe(2);
      expect(g.tollgateRefusedBeforeMetrics).toBeUndefined();
    } finally {
      g.tollgateMetrics = saved;
    }
  });
});
