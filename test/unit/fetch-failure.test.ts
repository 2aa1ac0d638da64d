import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { fetch as undiciFetch } from "undici";
import { describe, expect, it } from "vitest";
import type { Db } from "@/lib/db";
import { EgressRefusedError, type GuardedFetch } from "@/lib/http/egress";
import { describeFetchFailure } from "@/lib/http/fetch-failure";
import { runDueProbes } from "@/lib/probes/run-due-probes";

// What a probe that got no answer says on the trace (its audit reason, which every role reads):
// fixed words for each cause, never the HTTP client's own message, which quotes what it was
// given: a header value (the provider's credential) or the whole URL with its query.

const secret = "c2tfbGl2ZV9wcm9iZV9zZWNyZXQ";

// The error the HTTP client really throws for this request.
async function failureOf(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  try {
    await undiciFetch(url, { headers, signal: AbortSignal.timeout(3000) });
  } catch (error) {
    return error;
  }
  throw new Error("the request did not fail");
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("describeFetchFailure", () => {
  it("a header value the client refuses: fixed words, not the value it quotes", async () => {
    const error = await failureOf("http://127.0.0.1:9/x", { authorization: `Basic ${secret}\r\nbW9yZQ==` });
    expect((error as Error).message).toContain(secret); // what used to reach the audit log
    expect(describeFetchFailure(error, 5000)).toBe("the request could not be built (invalid header or URL)");
  });

  it("a URL with credentials: fixed words, not the URL it quotes", async () => {
    const error = await failureOf(`http://user:${secret}@127.0.0.1:9/x?token=${secret}`);
    expect((error as Error).message).toContain(secret);
    expect(describeFetchFailure(error, 5000)).not.toContain(secret);
  });

  it("connection refused", async () => {
    const error = await failureOf(`http://127.0.0.1:${await closedPort()}/x?token=${secret}`);
    expect(describeFetchFailure(error, 5000)).toBe("connection refused");
  });

  it("a timeout is named as one, with the probe's own limit", () => {
    expect(describeFetchFailure(new DOMException("The operation was aborted due to timeout", "TimeoutError"), 1500)).toBe("no answer within 1500 ms");
  });

  it("the egress policy's refusal is kept: it names only what the tenant typed", () => {
    const refusal = new EgressRefusedError("provider.internal", false);
    expect(describeFetchFailure(refusal, 5000)).toBe(refusal.message);
    expect(describeFetchFailure(new TypeError("fetch failed", { cause: refusal }), 5000)).toBe(refusal.message);
  });

  it.each([
    ["ENOTFOUND", "the host name did not resolve (DNS)"],
    ["EAI_AGAIN", "the host name did not resolve (DNS)"],
    ["CERT_HAS_EXPIRED", "the TLS handshake failed (certificate or protocol)"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", "the TLS handshake failed (certificate or protocol)"],
    ["UND_ERR_CONNECT_TIMEOUT", "no connection within the connect timeout"],
    ["UND_ERR_SOCKET", "the connection closed before a full answer"],
    ["EHOSTUNREACH", "the host is unreachable"],
    ["ESOMETHINGNEW", "the request failed (ESOMETHINGNEW)"],
  ])("cause code %s → %s, whatever the message says", (code, text) => {
    const cause = Object.assign(new Error(`getaddrinfo ${code} https://api.example.com/x?token=${secret}`), { code });
    expect(describeFetchFailure(new TypeError("fetch failed", { cause }), 5000)).toBe(text);
  });

  it("anything else: generic words", () => {
    expect(describeFetchFailure(new Error(`boom ${secret}`), 5000)).toBe("the request failed before an answer");
    expect(describeFetchFailure(`thrown string ${secret}`, 5000)).toBe("the request failed before an answer");
    const oddCode = Object.assign(new Error("x"), { code: `lower ${secret}` });
    expect(describeFetchFailure(oddCode, 5000)).toBe("the request failed before an answer");
  });
});

// The probe pass with a database stand-in: what it records for a request that throws.
describe("runDueProbes", () => {
  it("records fixed words, never the thrown message, for a probe that got no answer", async () => {
    const recorded: unknown[][] = [];
    const due = {
      operationId: "op_1",
      tenantId: "t_1",
      tool: "pay.charge",
      downstreamKey: "dk_1",
      resourceId: null,
      probe: { url: "https://api.example.com/charges/{downstreamKey}", succeeded: { status: [200] } },
      probeNumber: 1,
      fencingToken: 7n,
    };
    const db = {
      $queryRaw: async (strings: TemplateStringsArray, ...values: unknown[]) => {
        if (strings.join("?").includes("tollgate_take_due_probes")) return [due];
        recorded.push(values);
        return [{ r: { code: "recorded" } }];
      },
    } as unknown as Db;
    const throwing = Object.assign(
      async () => {
        throw new TypeError(`Headers.append: "Bearer ${secret}\r\n" is an invalid header value.`);
      },
      { close: async () => {} },
    ) as GuardedFetch;

    await runDueProbes({ db, fetch: throwing, serverSecret: "unit-secret-key-0123456789abcdef0123456789" });

    expect(recorded).toHaveLength(1);
    expect(JSON.stringify(recorded[0], (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(secret);
    // tenant, operation, token, probe number, verdict, status, summary, …
    expect(recorded[0]!.slice(2, 7)).toEqual([7n, 1, "inconclusive", null, "probe 1: GET https://api.example.com/charges/dk_1 failed: the request could not be built (invalid header or URL)"]);
  });
});
