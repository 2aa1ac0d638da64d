import { describe, expect, it } from "vitest";
import { decryptSecret } from "@/lib/crypto/secret-box";
import { openProbe, probeView, REDACTED, sealProbe } from "@/lib/probes/probe-headers";
import { probeSchema } from "@/lib/probes/probe-schema";

// A probe's header values (the provider's credential) at rest, on display and in the worker.

const secret = "unit-secret-key-0123456789abcdef0123456789";
const probe = (headers?: Record<string, string>) =>
  probeSchema.parse({ url: "https://api.example.com/charges/{downstreamKey}", succeeded: { status: [200] }, ...(headers ? { headers } : {}) });

describe("sealProbe", () => {
  it("stores every value sealed and no plain `headers`", () => {
    const stored = sealProbe(probe({ Authorization: "Bearer sk_1" }), null, secret);
    expect(stored).not.toHaveProperty("headers");
    const box = (stored.sealedHeaders as Record<string, string>).Authorization!;
    expect(box).not.toContain("sk_1");
    expect(decryptSecret(box, secret)).toBe("Bearer sk_1");
  });

  it("keeps a stored value for [redacted] (header names compared without case), replaces others, drops the ones left out", () => {
    const first = sealProbe(probe({ Authorization: "Bearer sk_1", "X-Account": "acct_1", "X-Old": "gone" }), null, secret);
    const second = sealProbe(probe({ authorization: REDACTED, "X-Account": "acct_2" }), first, secret);
    const opened = openProbe(second, secret) as { headers: Record<string, string> };
    expect(opened.headers).toEqual({ authorization: "Bearer sk_1", "X-Account": "acct_2" });
  });

  it("seals a plain value stored before headers were sealed when [redacted] keeps it", () => {
    const legacy = { url: "https://api.example.com/x", succeeded: { status: [200] }, headers: { Authorization: "Bearer legacy" } };
    const stored = sealProbe(probe({ Authorization: REDACTED }), legacy, secret);
    expect(JSON.stringify(stored)).not.toContain("legacy");
    expect((openProbe(stored, secret) as { headers: Record<string, string> }).headers).toEqual({ Authorization: "Bearer legacy" });
  });

  it("keeps a stored value for [redacted] only while the probe asks the same origin", () => {
    const first = sealProbe(probe({ Authorization: "Bearer sk_1" }), null, secret);
    const otherPath = probeSchema.parse({ url: "https://api.example.com/v2/charges?key={downstreamKey}", succeeded: { status: [200] }, headers: { Authorization: REDACTED } });
    expect((openProbe(sealProbe(otherPath, first, secret), secret) as { headers: Record<string, string> }).headers).toEqual({ Authorization: "Bearer sk_1" });

    for (const url of ["https://attacker.example/charges/{downstreamKey}", "http://api.example.com/charges/{downstreamKey}", "https://api.example.com:8443/charges/{downstreamKey}"]) {
      const moved = probeSchema.parse({ url, succeeded: { status: [200] }, headers: { Authorization: REDACTED } });
      expect(() => sealProbe(moved, first, secret), url).toThrow(/policy\.probe\.headers\.Authorization: .*now points at .* instead of https:\/\/api\.example\.com: send the value/);
      // With the value typed again, the move is allowed.
      expect(() => sealProbe({ ...moved, headers: { Authorization: "Bearer sk_2" } }, first, secret)).not.toThrow();
    }
  });

  it("refuses [redacted] for a header with no stored value", () => {
    expect(() => sealProbe(probe({ Authorization: REDACTED }), null, secret)).toThrow(/policy\.probe\.headers\.Authorization/);
  });

  it("a probe without headers is stored as it is", () => {
    expect(sealProbe(probe(), null, secret)).toEqual(probe());
  });
});

describe("probeSchema: an operation's values never choose the probe's host", () => {
  const accepts = (url: string) => probeSchema.safeParse({ url, succeeded: { status: [200] } }).success;

  it("accepts placeholders in the path and query, and as subdomains of a fixed domain", () => {
    expect(accepts("https://api.example.com/charges/{resourceId}?key={downstreamKey}")).toBe(true);
    expect(accepts("http://{resourceId}.provider.example/x")).toBe(true);
    expect(accepts("https://{resourceId}.eu.api.example.com:8443/x")).toBe(true);
  });

  it("refuses a placeholder that is, or ends, the host", () => {
    expect(accepts("https://{resourceId}/x")).toBe(false);
    expect(accepts("https://api.example.com{resourceId}/x")).toBe(false);
    expect(accepts("https://{resourceId}.com/x")).toBe(false);
    expect(accepts("https://api.{resourceId}/x")).toBe(false);
    expect(accepts("https://api.example.com:{resourceId}/x")).toBe(false);
    expect(accepts("https://{resourceId}.1.1/x")).toBe(false);
  });

  it("refuses other spellings a URL parser reads with the placeholder as the host", () => {
    for (const url of ["https:{resourceId}/charges", "https:/{resourceId}/x", "https:\\{resourceId}/x", " https://{resourceId}.api.example.com/x", "ht\ttps://{resourceId}/x", "https://api.example.com/a b"]) {
      expect(accepts(url), JSON.stringify(url)).toBe(false);
    }
  });
});

describe("probeView and openProbe", () => {
  it("show names only, for sealed and for plain (older) values alike", () => {
    const sealed = sealProbe(probe({ Authorization: "Bearer sk_1" }), null, secret);
    expect(probeView(sealed)).toEqual({ ...probe(), headers: { Authorization: REDACTED } });
    const legacy = { ...probe(), headers: { "X-Key": "plain" } };
    expect(probeView(legacy)).toEqual({ ...probe(), headers: { "X-Key": REDACTED } });
    expect(probeView(null)).toBeNull();
    expect(probeView(probe())).toEqual(probe());
  });

  it("openProbe gives the worker a probe probeSchema accepts, and throws under another secret", () => {
    const sealed = sealProbe(probe({ Authorization: "Bearer sk_1" }), null, secret);
    expect(probeSchema.parse(openProbe(sealed, secret)).headers).toEqual({ Authorization: "Bearer sk_1" });
    expect(() => openProbe(sealed, "another-secret-key-0123456789abcdef012345")).toThrow();
    const legacy = { ...probe(), headers: { "X-Key": "plain" } };
    expect(openProbe(legacy, secret)).toBe(legacy);
  });
});
