import dns, { type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
import { parseCidr } from "@/lib/http/cidr";

// Outbound HTTP to URLs a tenant admin typed (event subscriptions, probes) goes through here.
// Without it, an admin could point Tollgate's worker at the machine's own services, the cloud
// metadata endpoint or anything else on the private network (server-side request forgery),
// and read parts of the answers on the delivery and probe traces. The check runs on the address
// the socket actually connects to (inside the DNS lookup undici's connector makes), so a name
// that resolves to a public address when the URL is saved and to 10.0.0.5 when it is called
// (DNS rebinding) is refused too. Addresses in TOLLGATE_EGRESS_ALLOW (CIDRs) are let through:
// a receiver on the private network, or 127.0.0.1 in development and tests.

// Special-purpose ranges (RFC 6890 and successors): nothing a tenant's public endpoint lives on.
const FORBIDDEN_V4: [string, number][] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];
const FORBIDDEN_V6: [string, number][] = [
  ["::", 96], // unspecified, loopback (::1) and the deprecated IPv4-compatible form
  ["64:ff9b:1::", 48], // local-use IPv4/IPv6 translation
  ["100::", 64], // discard
  ["2001::", 23], // IETF protocol assignments (Teredo, ORCHID…)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: embeds an IPv4 address of any kind
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
];

export type EgressPolicy = {
  // True when a connection to this IP address (v4 or v6) is allowed.
  permits: (address: string) => boolean;
  // What the policy says about an address it refuses, for the delivery's or probe's error.
  describe: () => string;
};

export class EgressRefusedError extends Error {
  readonly code = "EGRESS_REFUSED";
  constructor(host: string, address: string) {
    const via = host === address ? "" : ` (${host} resolves to it)`;
    super(`refused by the egress policy: ${address}${via} is a private, loopback or reserved address; allow it with TOLLGATE_EGRESS_ALLOW`);
    this.name = "EgressRefusedError";
  }
}

// `allow` is a list of CIDRs ("127.0.0.1/32", "10.1.0.0/16", "fd00::/8") or single addresses.
export function egressPolicy(allow: readonly string[] = []): EgressPolicy {
  const forbidden = new BlockList();
  for (const [net, prefix] of FORBIDDEN_V4) forbidden.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of FORBIDDEN_V6) forbidden.addSubnet(net, prefix, "ipv6");
  const allowed = new BlockList();
  for (const entry of allow) {
    const { address, prefix, family } = parseCidr(entry);
    allowed.addSubnet(address, prefix, family);
  }
  return {
    permits: (address) => {
      const family = isIP(address) === 6 ? "ipv6" : "ipv4";
      // BlockList matches IPv4-mapped IPv6 (::ffff:127.0.0.1) against the IPv4 rules as well.
      return allowed.check(address, family) || !forbidden.check(address, family);
    },
    describe: () => (allow.length > 0 ? `public addresses and ${allow.join(", ")}` : "public addresses only"),
  };
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

// A `lookup` for net.connect that refuses the connection when any address the name resolves to
// is not permitted (refusing on any, not just the first, so a name cannot mix a public address
// with a private one and win on the retry).
function guardedLookup(policy: EgressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((a) => !policy.permits(a.address));
      if (refused) return callback(new EgressRefusedError(hostname, refused.address) as NodeJS.ErrnoException, []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
      callback(null, first.address, first.family);
    });
  };
}

// Typed as the global fetch: undici's Response has the same interface as the global one (Node's
// own fetch is a bundled copy of undici), only declared by a second copy of the types.
export type GuardedFetch = (url: string, init: RequestInit) => Promise<Response>;

// fetch through a connection pool whose every new connection passes the policy. IP literals
// never reach a lookup (net.connect skips it for them), so they are checked here first.
export function guardedFetch(policy: EgressPolicy): GuardedFetch {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(policy) } });
  return async (url, init) => {
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
    if (isIP(host) !== 0 && !policy.permits(host)) throw new EgressRefusedError(host, host);
    try {
      return (await undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher })) as unknown as Response;
    } catch (error) {
      // undici wraps the connector's error in TypeError("fetch failed"); the policy's own words are clearer.
      const cause = (error as { cause?: unknown }).cause;
      throw cause instanceof EgressRefusedError ? cause : error;
    }
  };
}
