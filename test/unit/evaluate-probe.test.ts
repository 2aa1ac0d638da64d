import { describe, expect, it } from "vitest";
import { evaluateProbe, readPath } from "@/lib/probes/evaluate-probe";
import { probeSchema } from "@/lib/probes/probe-schema";

// How a probe's rules read a provider's answer: only succeeded/failed are conclusive; "not
// found" wins over both, and an answer matching both contradicts itself (inconclusive).

const probe = probeSchema.parse({
  url: "https://api.example.com/charges?key={downstreamKey}",
  succeeded: { status: [200], path: "data.0.status", equals: ["paid", "settled"] },
  failed: { status: [200, 402], path: "data.0.status", equals: ["failed"] },
  notFound: { status: [404] },
  resourceIdPath: "data.0.id",
});

describe("evaluateProbe", () => {
  it.each([
    [200, { data: [{ status: "paid", id: "ch_1" }] }, "succeeded", "ch_1"],
    [200, { data: [{ status: "settled", id: 42 }] }, "succeeded", "42"],
    [402, { data: [{ status: "failed", id: "ch_2" }] }, "failed", "ch_2"],
    [404, { data: [{ status: "paid" }] }, "not_found", null],
    [200, { data: [] }, "inconclusive", null],
    [200, { data: [{ status: "pending" }] }, "inconclusive", null],
    [500, { data: [{ status: "paid" }] }, "inconclusive", null],
    [200, null, "inconclusive", null],
  ])("status %s, body %j → %s", (status, body, verdict, resourceId) => {
    expect(evaluateProbe(probe, { status, body })).toEqual({ verdict, resourceId });
  });

  it("a resource id PostgreSQL cannot store (an escaped NUL, half a surrogate pair) is dropped, the verdict kept; a long one is cut whole", () => {
    // What JSON.parse makes of a provider's "ch_1\u0000": recording it failed the probe's whole record.
    for (const id of [JSON.parse('"ch_1\\u0000"'), JSON.parse('"ch_\\ud83d"')]) {
      expect(evaluateProbe(probe, { status: 200, body: { data: [{ status: "paid", id }] } })).toEqual({ verdict: "succeeded", resourceId: null });
    }
    const long = `${"x".repeat(499)}😀tail`;
    expect(evaluateProbe(probe, { status: 200, body: { data: [{ status: "paid", id: long }] } }).resourceId).toBe("x".repeat(499));
  });

  it("an answer that matches both succeeded and failed is inconclusive", () => {
    const both = probeSchema.parse({ url: "https://x.example.com/{resourceId}", succeeded: { status: [200] }, failed: { status: [200] } });
    expect(evaluateProbe(both, { status: 200, body: {} }).verdict).toBe("inconclusive");
  });

  it("a path without equals needs the value present and not null", () => {
    const present = probeSchema.parse({ url: "https://x.example.com/{operationId}", succeeded: { path: "charge.id" } });
    expect(evaluateProbe(present, { status: 200, body: { charge: { id: "c" } } }).verdict).toBe("succeeded");
    expect(evaluateProbe(present, { status: 200, body: { charge: { id: null } } }).verdict).toBe("inconclusive");
  });

  // Stripe's 5xx, 429 and 401 bodies carry `error`, as its declined charges do: read by
  // "failed": {"path": "error"}, a provider that could not answer would settle the call failed.
  describe("a rule without status reads 2xx answers only", () => {
    const byPath = probeSchema.parse({
      url: "https://api.example.com/charges?key={downstreamKey}",
      succeeded: { path: "charge.id" },
      failed: { path: "error" },
    });
    const errorBody = { error: { type: "api_error", message: "try again later" } };

    it.each([500, 502, 503, 504, 429, 408, 401, 403, 404, 409, 302])("status %s with an `error` body is inconclusive", (status) => {
      expect(evaluateProbe(byPath, { status, body: errorBody })).toEqual({ verdict: "inconclusive", resourceId: null });
      expect(evaluateProbe(byPath, { status, body: { charge: { id: "ch_1" } } }).verdict).toBe("inconclusive");
    });

    it.each([200, 201, 204])("status %s is read by the rules", (status) => {
      expect(evaluateProbe(byPath, { status, body: errorBody }).verdict).toBe("failed");
      expect(evaluateProbe(byPath, { status, body: { charge: { id: "ch_1" } } }).verdict).toBe("succeeded");
    });

    it("a rule that names a status applies to it as written", () => {
      const named = probeSchema.parse({
        url: "https://api.example.com/charges/{resourceId}",
        succeeded: { status: [200], path: "charge.id" },
        failed: { status: [410, 503], path: "error" },
      });
      expect(evaluateProbe(named, { status: 503, body: errorBody }).verdict).toBe("failed");
      expect(evaluateProbe(named, { status: 410, body: errorBody }).verdict).toBe("failed");
      expect(evaluateProbe(named, { status: 500, body: errorBody }).verdict).toBe("inconclusive");
    });

    it("notFound never settles, so it keeps reading every status", () => {
      const missing = probeSchema.parse({ ...byPath, notFound: { path: "error.code", equals: ["resource_missing"] } });
      expect(evaluateProbe(missing, { status: 404, body: { error: { code: "resource_missing" } } }).verdict).toBe("not_found");
    });
  });

  it("paths read own properties only", () => {
    expect(readPath({ a: { b: 1 } }, "a.b")).toBe(1);
    expect(readPath({}, "constructor")).toBeUndefined();
    expect(readPath({ a: [] }, "a.length")).toBe(0);
    expect(readPath({ a: "text" }, "a.length")).toBeUndefined();
  });
});

describe("probeSchema", () => {
  it.each<[Record<string, unknown>, string]>([
    [{ url: "https://x.example.com/{secret}", succeeded: { status: [200] } }, "unknown placeholder"],
    [{ url: "ftp://x.example.com/{downstreamKey}", succeeded: { status: [200] } }, "not http"],
    [{ url: "https://x.example.com/{downstreamKey}" }, "no succeeded or failed rule"],
    [{ url: "https://x.example.com/{downstreamKey}", succeeded: {} }, "an empty rule"],
    [{ url: "https://x.example.com/{downstreamKey}", succeeded: { equals: ["x"] } }, "equals without a path"],
    [{ url: "https://x.example.com/{downstreamKey}", succeeded: { path: "a..b" } }, "a bad path"],
    [{ url: "https://x.example.com/{downstreamKey}", succeeded: { status: [200] }, method: "POST" }, "an unknown field"],
  ])("refuses %j (%s)", (value, _why) => {
    expect(probeSchema.safeParse(value).success).toBe(false);
  });

  // A value the HTTP client refuses makes it throw with the value (the credential) in its message.
  const credential = "c2tfbGl2ZV9wcm9iZV9zZWNyZXQ";
  it.each([
    ["a CRLF (base64 wrapped at 76 columns)", `Basic ${credential}\r\nbW9yZQ==`],
    ["a bare LF", `Bearer ${credential}\n`],
    ["a NUL", `Bearer ${credential}\u0000`],
    ["a tab", `Bearer\t${credential}`],
    ["DEL", `Bearer ${credential}\u007f`],
    ["a character an HTTP header cannot carry", `Bearer ${credential}€`],
  ])("refuses a header value with %s, and never repeats it", (_why, value) => {
    const result = probeSchema.safeParse({ url: "https://x.example.com/{downstreamKey}", succeeded: { status: [200] }, headers: { Authorization: value } });
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path.join("."))).toEqual(["headers.Authorization"]);
    expect(JSON.stringify(result.error!.issues.map((i) => [i.path, i.message]))).not.toContain(credential);
  });

  it.each(["X-Key\r\nX-Injected", "X Key", "X-Key\u0000", ""])("refuses the header name %j", (name) => {
    expect(probeSchema.safeParse({ url: "https://x.example.com/{downstreamKey}", succeeded: { status: [200] }, headers: { [name]: "v" } }).success).toBe(false);
  });

  it("accepts printable values, [redacted] included", () => {
    const headers = { Authorization: "Bearer sk_live_51H~x/+=", Accept: "application/json; q=0.9", "X-Keep": "[redacted]" };
    expect(probeSchema.parse({ url: "https://x.example.com/{downstreamKey}", succeeded: { status: [200] }, headers }).headers).toEqual(headers);
  });

  it.each([
    "https://user:pass@api.example.com/charges/{downstreamKey}",
    "https://sk_live_key@api.example.com/charges/{downstreamKey}",
    "https://:pass@api.example.com/charges/{downstreamKey}",
    "https://{downstreamKey}@api.example.com/charges",
  ])("refuses user info in the URL: %s", (url) => {
    const result = probeSchema.safeParse({ url, succeeded: { status: [200] } });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(["url"]);
    expect(result.error!.issues[0]!.message).toMatch(/user name or password/);
  });
});
