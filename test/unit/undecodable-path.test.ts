import { describe, expect, it } from "vitest";
import { undecodablePathResponse, undecodableSegment } from "@/lib/http/undecodable-path";

describe("undecodableSegment", () => {
  it("names the first segment that does not decode", () => {
    expect(undecodableSegment("/api/v1/operations/%ZZ/complete")).toBe("%ZZ");
    expect(undecodableSegment("/a/%E0%A4%A/%ZZ")).toBe("%E0%A4%A");
    expect(undecodableSegment("/%ED%A0%80")).toBe("%ED%A0%80");
    expect(undecodableSegment("/x/%")).toBe("%");
  });

  it("lets every path that decodes through", () => {
    for (const ok of ["/", "/api/live", "/t/caf%C3%A9", "/api/v1/operations/op_%41bc", "/%25", "/a%2Fb", "/%F0%9F%98%80"]) {
      expect(undecodableSegment(ok), ok).toBeNull();
    }
  });
});

describe("undecodablePathResponse", () => {
  it("is a problem+json 400 that shows at most 64 characters of the segment", async () => {
    const long = `%ZZ${"a".repeat(100)}`;
    const res = undecodablePathResponse(long);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("invalid-request");
    expect(body.detail).toBe(`The path segment "${long.slice(0, 64)}…" is not valid percent-encoded UTF-8.`);
  });
});
