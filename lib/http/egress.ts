import dns, { type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { Agent, buildConnector, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
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
  ["3fff::", 20], // documentation
  ["5f00::", 16], // segment routing (SRv6) SIDs
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed on some networks)
  ["ff00::", 8], // multicast
];
// 2001::/23 and 2002::/16 also hold a few public addresses (AS112, 6to4 forms of public IPv4):
// refused on purpose, a tenant's receiver has a plain address too.

// Translation prefixes that carry an IPv4 address in their last 32 bits: NAT64 (RFC 6052; on a
// host with DNS64 an AAAA record 64:ff9b::a00:5 reaches 10.0.0.5) and SIIT's IPv4-translated
// form. Not refused outright (an IPv6-only deployment reaches public receivers through NAT64):
// the IPv4 address inside is judged by the IPv4 rules. (IPv4-mapped ::ffff:a.b.c.d needs no help:
// BlockList matches it against the IPv4 rules itself.)
const TRANSLATED_V6: [string, number][] = [
  ["64:ff9b::", 96],
  ["::ffff:0:0:0", 96],
];

export type EgressPolicy = {
  // True when a connection to this IP address (v4 or v6) is allowed; false for anything else.
  permits: (address: string) => boolean;
};

// The tenant sees this message (on the delivery, on the probe's trace; every console role reads
// them): it names what the tenant typed, never the address an internal name resolves to, which
// would map the private network. For a name, one text whether it resolved to a private address
// or did not resolve at all: told apart ("resolves to a private address" against "did not
// resolve"), a tenant could try names and learn which private ones Tollgate's resolver knows
// (db.internal, vault.corp…). An IP literal resolves nothing, so it is named as what it is.
export class EgressRefusedError extends Error {
  readonly code = "EGRESS_REFUSED";
  constructor(host: string, literal: boolean) {
    super(
      literal
        ? `refused by the egress policy: ${host} is a private, loopback or reserved address; allow it with TOLLGATE_EGRESS_ALLOW`
        : `refused by the egress policy: ${host} did not resolve to public addresses only (a private, loopback or reserved address, or none: not told apart); allow a private receiver with TOLLGATE_EGRESS_ALLOW`,
    );
    this.name = "EgressRefusedError";
  }
}

// `allow` is a list of CIDRs ("127.0.0.1/32", "10.1.0.0/16", "fd00::/8") or single addresses.
export function egressPolicy(allow: readonly string[] = []): EgressPolicy {
  const forbidden = blockList(FORBIDDEN_V4, FORBIDDEN_V6);
  const translated = blockList([], TRANSLATED_V6);
  const allowed = new BlockList();
  for (const entry of allow) {
    const { address, prefix, family } = parseCidr(entry);
    allowed.addSubnet(address, prefix, family);
  }
  const permits = (address: string): boolean => {
    const version = isIP(address);
    if (version === 0) return false;
    const family = version === 6 ? "ipv6" : "ipv4";
    if (allowed.check(address, family)) return true;
    if (family === "ipv6" && translated.check(address, "ipv6")) {
      const inner = lastIpv4(address);
      return inner !== null && permits(inner);
    }
    // BlockList matches IPv4-mapped IPv6 (::ffff:127.0.0.1) against the IPv4 rules as well.
    return !forbidden.check(address, family);
  };
  return { permits };
}

function blockList(v4: [string, number][], v6: [string, number][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, "ipv6");
  return list;
}

// The IPv4 address in an IPv6 address's last 32 bits. The URL parser writes the address in
// canonical form (hex groups, at most one "::"; a zone id or anything else invalid throws).
function lastIpv4(address: string): string | null {
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head = "", tail] = canonical.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill("0"), ...tailGroups];
  const hi = parseInt(groups[6] ?? "", 16);
  const lo = parseInt(groups[7] ?? "", 16);
  if (groups.length !== 8 || !Number.isInteger(hi) || !Number.isInteger(lo)) return null;
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type Resolve = (hostname: string, options: LookupOptions & { all: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

// A `lookup` for net.connect and tls.connect that refuses the connection when any address the
// name resolves to is not permitted (any, not just the first, so a name cannot mix a public
// address with a private one and win on the retry). Node 20 asks with `all: true` (Happy
// Eyeballs tries each address in turn); without it, the first address is returned. A name that
// does not resolve (any lookup error, or no address) gets the very same refusal as a private
// one (see EgressRefusedError): its own error ("the host name did not resolve (DNS)") told them apart.
export function guardedLookup(policy: EgressPolicy, resolve: Resolve = dns.lookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error || addresses.length === 0 || addresses.some((a) => !policy.permits(a.address))) {
        return callback(new EgressRefusedError(hostname, false) as NodeJS.ErrnoException, []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

// Typed as the global fetch: undici's Response has the same interface as the global one (Node's
// own fetch is a bundled copy of undici), only declared by a second copy of the types.
export type GuardedFetch = ((url: string, init: RequestInit) => Promise<Response>) & { close: () => Promise<void> };

// fetch through a connection pool whose every new connection passes the policy: a name in its
// lookup, an IP literal (net.connect never looks one up) in the connector itself, so whatever
// URL reaches the pool (a caller's, a redirect's) is checked. Redirects are never followed
// anyway: a redirect is not the receiver's answer, and the next hop would be the tenant's choice.
export function guardedFetch(policy: EgressPolicy): GuardedFetch {
  const connect = buildConnector({ lookup: guardedLookup(policy) });
  const dispatcher = new Agent({
    connect: (options, callback) => {
      const host = options.hostname.replace(/^\[(.*)\]$/, "$1");
      if (isIP(host) !== 0 && !policy.permits(host)) return callback(new EgressRefusedError(host, true), null);
      return connect(options, callback);
    },
  });
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    try {
      return (await undiciFetch(url, { ...(init as UndiciRequestInit), redirect: "manual", dispatcher })) as unknown as Response;
    } catch (error) {
      // undici wraps the connector's error in TypeError("fetch failed"); the policy's own words are clearer.
      const cause = (error as { cause?: unknown }).cause;
      throw cause instanceof EgressRefusedError ? cause : error;
    }
  };
  return Object.assign(fetch, { close: () => dispatcher.close() });
}
