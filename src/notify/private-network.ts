import { isIP } from "node:net";

/**
 * Where a sink must not send unless the operator says so (`allow_private_network: true`):
 * link-local addresses and the cloud metadata services behind them. A webhook URL that
 * reaches http://169.254.169.254/ turns every alert into a request to the instance's
 * credentials endpoint, and the receiver's answer is quoted in errors. Loopback stays
 * allowed (local relays, tests). The host is checked as the URL parser normalises it, so
 * 2852039166, 0xA9FEA9FE and 169.254.169.254 are the same host.
 */
const METADATA_NAMES = new Set([
  "metadata.google.internal", // Google Cloud
  "metadata.goog", // Google Cloud
  "metadata", // Google Cloud, short name
  "instance-data", // AWS EC2
  "instance-data.ec2.internal", // AWS EC2
  "metadata.tencentyun.com", // Tencent Cloud
]);

/** Metadata services outside 169.254.0.0/16 and fe80::/10. */
const METADATA_ADDRESSES = new Set([
  "100.100.100.200", // Alibaba Cloud
  "fd00:ec2::254", // AWS EC2 over IPv6
]);

/** Why `hostname` (as `new URL(…).hostname` gives it) is refused, or undefined when it is not. */
export function privateNetworkReason(hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (METADATA_NAMES.has(host) || METADATA_ADDRESSES.has(host)) return "a cloud metadata service";
  const v4 = host.startsWith("::ffff:") ? ipv4OfMapped(host.slice(7)) : host;
  if (isIP(v4) === 4) return v4.startsWith("169.254.") ? "a link-local address (169.254.0.0/16, where cloud metadata services answer)" : undefined;
  if (isIP(host) === 6 && /^fe[89ab][0-9a-f]?:/.test(host)) return "a link-local address (fe80::/10)";
  return undefined;
}

/** "::ffff:a9fe:a9fe" (how the URL parser writes a mapped address) or "::ffff:169.254.1.1" as dotted IPv4. */
function ipv4OfMapped(rest: string): string {
  if (isIP(rest) === 4) return rest;
  const match = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
  if (!match) return rest;
  const high = Number.parseInt(match[1] as string, 16);
  const low = Number.parseInt(match[2] as string, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}
