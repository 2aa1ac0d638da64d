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

  it("an answer that matches both succeeded and failed is inconclusive", () => {
    const both = probeSchema.parse({ url: "https://x.example.com/{resourceId}", succeeded: { status: [200] }, failed: { status: [200] } });
    expect(evaluateProbe(both, { status: 200, body: {} }).verdict).toBe("inconclusive");
  });

  it("a path without equals needs the value present and not null", () => {
    const present = probeSchema.parse({ url: "https://x.example.com/{operationId}", succeeded: { path: "charge.id" } });
    expect(evaluateProbe(present, { status: 200, body: { charge: { id: "c" } } }).verdict).toBe("succeeded");
    expect(evaluateProbe(present, { status: 200, body: { charge: { id: null } } }).verdict).toBe("inconclusive");
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
});
