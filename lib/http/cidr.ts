import { isIP } from "node:net";

export type Cidr = { address: string; prefix: number; family: "ipv4" | "ipv6" };

// "10.1.0.0/16", "fd00::/8", or a single address (a /32 or /128).
export function parseCidr(entry: string): Cidr {
  const parts = entry.trim().split("/");
  const address = parts[0] ?? "";
  const version = isIP(address);
  // A zone id (fe80::1%eth0) parses as an address but would never match a connection's.
  if (version === 0 || parts.length > 2 || address.includes("%")) throw new Error(`"${entry}" is not an IP address or CIDR`);
  const max = version === 4 ? 32 : 128;
  const prefixText = parts[1];
  if (prefixText !== undefined && (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)) {
    throw new Error(`"${entry}" has an invalid prefix length (0 to ${max})`);
  }
  return { address, prefix: prefixText === undefined ? max : Number(prefixText), family: version === 4 ? "ipv4" : "ipv6" };
}
