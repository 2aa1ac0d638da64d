import { describe, expect, it } from "vitest";
import { parseCidr } from "@/lib/http/cidr";
import type { LookupAddress } from "node:dns";
import { EgressRefusedError, egressPolicy, guardedLookup, type Resolve } from "@/lib/http/egress";
import { readStreamUpTo, readTextUpTo } from "@/lib/http/read-body";

// Which addresses a tenant's URLs may make the worker connect to (lib/http/egress.ts).

describe("the default egress policy", () => {
  const policy = egressPolicy();

  it.each([
    "93.184.215.14", "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "192.169.0.1", "223.255.255.255",
    "2606:4700:4700::1111", "2a00:1450:4001:82a::200e", "2001:200::1",
  ])("permits the public address %s", (address) => {
    expect(policy.permits(address)).toBe(true);
  });

  it.each([
    ["127.0.0.1", "loopback"], ["127.255.255.254", "loopback"], ["0.0.0.0", "this network"], ["10.0.0.5", "private"],
    ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.1", "private"], ["169.254.169.254", "cloud metadata"],
    ["100.64.0.1", "carrier-grade NAT"], ["192.0.0.8", "IETF"], ["198.18.0.1", "benchmarking"], ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"], ["192.0.2.10", "documentation"],
    ["::1", "IPv6 loopback"], ["::", "unspecified"], ["::ffff:127.0.0.1", "IPv4-mapped loopback"], ["::ffff:a9fe:a9fe", "IPv4-mapped metadata"],
    ["::ffff:10.1.2.3", "IPv4-mapped private"], ["::127.0.0.1", "IPv4-compatible loopback"], ["fd12:3456::1", "unique local"], ["fe80::1", "link-local"],
    ["ff02::1", "multicast"], ["2001:db8::1", "documentation"], ["2002:7f00:1::1", "6to4 of 127.0.0.1"], ["64:ff9b:1::a00:1", "local NAT64"],
    ["64:ff9b::a00:5", "NAT64 of 10.0.0.5"], ["64:ff9b::7f00:1", "NAT64 of 127.0.0.1"], ["64:ff9b::a9fe:a9fe", "NAT64 of the metadata address"],
    ["64:ff9b::10.0.0.5", "NAT64, dotted"], ["::ffff:0:a00:5", "SIIT of 10.0.0.5"], ["fec0::1", "site-local"], ["3fff::1", "documentation"],
    ["5f00::1", "SRv6"], ["fe80::1%eth0", "link-local with a zone"], ["", "not an address"], ["localhost", "a name"], ["10.0.0.1/8", "a CIDR"],
  ])("refuses %s (%s)", (address) => {
    expect(policy.permits(address)).toBe(false);
  });

  it("judges the IPv4 address inside a NAT64 or SIIT address by the IPv4 rules", () => {
    expect(policy.permits("64:ff9b::808:808")).toBe(true); // 8.8.8.8
    expect(policy.permits("64:ff9b::8.8.8.8")).toBe(true);
    expect(policy.permits("::ffff:0:808:808")).toBe(true);
    expect(egressPolicy(["10.20.0.0/16"]).permits("64:ff9b::a14:1")).toBe(true); // 10.20.0.1, allowed
    expect(egressPolicy(["10.20.0.0/16"]).permits("64:ff9b::a15:1")).toBe(false); // 10.21.0.1
  });
});

describe("an allow list", () => {
  const policy = egressPolicy(["127.0.0.1/32", "10.20.0.0/16", "fd00::/8"]);

  it("lets exactly its ranges through, and nothing else that is private", () => {
    expect(policy.permits("127.0.0.1")).toBe(true);
    expect(policy.permits("::ffff:127.0.0.1")).toBe(true);
    expect(policy.permits("127.0.0.2")).toBe(false);
    expect(policy.permits("10.20.255.1")).toBe(true);
    expect(policy.permits("10.21.0.1")).toBe(false);
    expect(policy.permits("fd12::1")).toBe(true);
    expect(policy.permits("fe80::1")).toBe(false);
    expect(policy.permits("8.8.8.8")).toBe(true);
  });

  it("reads single addresses as /32 and /128, and refuses what is not a CIDR", () => {
    expect(parseCidr("127.0.0.1")).toEqual({ address: "127.0.0.1", prefix: 32, family: "ipv4" });
    expect(parseCidr(" ::1 ")).toEqual({ address: "::1", prefix: 128, family: "ipv6" });
    expect(parseCidr("10.0.0.0/8")).toEqual({ address: "10.0.0.0", prefix: 8, family: "ipv4" });
    for (const bad of ["localhost", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/8/9", "10.0.0.0/", "10.0.0.0/ 8", "", "10.0.0.0/1e1", "fe80::1%eth0"]) {
      expect(() => parseCidr(bad), bad).toThrow();
    }
  });
});

describe("the lookup every new connection makes", () => {
  const answering = (addresses: LookupAddress[]): Resolve => (_host, _options, callback) => callback(null, addresses);
  const lookup = (addresses: LookupAddress[], all: boolean) =>
    new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
      guardedLookup(egressPolicy(), answering(addresses))("evil.example", { all }, (error, address, family) => resolve({ error, address, family })),
    );

  it("refuses a name when any one of its addresses is private, without saying which", async () => {
    const { error } = await lookup([{ address: "93.184.215.14", family: 4 }, { address: "10.0.3.17", family: 4 }], true);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect(error!.message).toBe("refused by the egress policy: evil.example did not resolve to public addresses only (a private, loopback or reserved address, or none: not told apart); allow a private receiver with TOLLGATE_EGRESS_ALLOW");
    expect(error!.message).not.toContain("10.0.3.17");
  });

  it("answers with every address when asked for all (Happy Eyeballs), else with the first", async () => {
    const addresses = [{ address: "93.184.215.14", family: 4 }, { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 }];
    expect(await lookup(addresses, true)).toEqual({ error: null, address: addresses, family: undefined });
    expect(await lookup(addresses, false)).toEqual({ error: null, address: "93.184.215.14", family: 4 });
  });
});

describe("reading the start of someone else's answer", () => {
  const streamOf = (...chunks: Uint8Array[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    });

  it("keeps the first maxBytes even when one chunk crosses the limit (a 20 KiB error page keeps its first 4 KiB)", async () => {
    const page = Buffer.from("x".repeat(20 * 1024));
    const { bytes, overflowed } = await readStreamUpTo(streamOf(Buffer.from("<html>"), page), 4096);
    expect(overflowed).toBe(true);
    expect(bytes.length).toBe(4096);
    expect(bytes.subarray(0, 6).toString()).toBe("<html>");
    expect(await readStreamUpTo(streamOf(Buffer.from("abc")), 3)).toEqual({ bytes: Buffer.from("abc"), overflowed: false });
  });

  it("never hands PostgreSQL a NUL", async () => {
    expect(await readTextUpTo(streamOf(Buffer.from("bad\0gateway")), 100)).toBe("bad\uFFFDgateway");
    expect(await readTextUpTo(null, 100)).toBe("");
  });
});
