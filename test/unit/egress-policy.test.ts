import { describe, expect, it } from "vitest";
import { parseCidr } from "@/lib/http/cidr";
import { egressPolicy } from "@/lib/http/egress";

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
  ])("refuses %s (%s)", (address) => {
    expect(policy.permits(address)).toBe(false);
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
    expect(policy.describe()).toBe("public addresses and 127.0.0.1/32, 10.20.0.0/16, fd00::/8");
  });

  it("reads single addresses as /32 and /128, and refuses what is not a CIDR", () => {
    expect(parseCidr("127.0.0.1")).toEqual({ address: "127.0.0.1", prefix: 32, family: "ipv4" });
    expect(parseCidr(" ::1 ")).toEqual({ address: "::1", prefix: 128, family: "ipv6" });
    expect(parseCidr("10.0.0.0/8")).toEqual({ address: "10.0.0.0", prefix: 8, family: "ipv4" });
    for (const bad of ["localhost", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/8/9", "10.0.0.0/", "10.0.0.0/ 8", "", "10.0.0.0/1e1"]) {
      expect(() => parseCidr(bad), bad).toThrow();
    }
  });
});
