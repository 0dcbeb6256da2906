/**
 * IP address parsing and classification for outgoing requests (webhook URL safety): pure functions over
 * bytes, IPv4 and IPv6, with IPv4 embedded in IPv6 (mapped, compatible, NAT64, 6to4) classified as the
 * IPv4 address it reaches.
 */

/** What an address is, for deciding whether the service may connect to it. Only `public` is allowed by default. */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link_local"
  | "cgnat"
  | "unique_local"
  | "unspecified"
  | "this_network"
  | "multicast"
  | "broadcast"
  | "metadata"
  | "reserved"
  | "documentation"
  | "invalid";

/** A parsed address: 4 bytes (IPv4) or 16 bytes (IPv6). */
export interface ParsedAddress {
  readonly version: 4 | 6;
  readonly bytes: Uint8Array;
}

const DEC_OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function parseV4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!DEC_OCTET.test(p)) return null;
    out[i] = Number(p);
  }
  return out;
}

const HEXTET = /^[0-9a-f]{1,4}$/i;

function parseV6(text: string): Uint8Array | null {
  if (text.length === 0 || text.length > 45) return null;
  let head = text;
  let v4: Uint8Array | null = null;
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".", lastColon)) {
    v4 = parseV4(text.slice(lastColon + 1));
    if (!v4) return null;
    head = text.slice(0, lastColon + 1) + "0:0";
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const split = (s: string): string[] | null => {
    if (s === "") return [];
    const groups = s.split(":");
    return groups.every((g) => HEXTET.test(g)) ? groups : null;
  };
  const left = split(halves[0]!);
  const right = halves.length === 2 ? split(halves[1]!) : [];
  if (!left || !right) return null;
  const total = left.length + right.length;
  if (halves.length === 2 ? total > 7 : total !== 8) return null;
  const groups = [...left, ...new Array<string>(8 - total).fill("0"), ...right];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  if (v4) out.set(v4, 12);
  return out;
}

/**
 * Parses an IP literal: dotted-decimal IPv4 (no octal, hex or short forms) or IPv6 in any RFC 4291 form,
 * brackets and a zone (`%eth0`) allowed. Null when `text` is not an IP literal.
 */
export function parseIpAddress(text: string): ParsedAddress | null {
  let t = text.trim();
  if (t.startsWith("[") && t.endsWith("]")) t = t.slice(1, -1);
  const v4 = parseV4(t);
  if (v4) return { version: 4, bytes: v4 };
  const zone = t.indexOf("%");
  if (zone >= 0) t = t.slice(0, zone);
  const v6 = t.includes(":") ? parseV6(t) : null;
  return v6 ? { version: 6, bytes: v6 } : null;
}

/** Whether `text` is an IPv4 or IPv6 literal. */
export function isIpAddress(text: string): boolean {
  return parseIpAddress(text) !== null;
}

function inV4(b: Uint8Array, net: readonly [number, number, number, number], bits: number): boolean {
  for (let i = 0; i < 4; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8));
    if (take === 0) return true;
    const mask = (0xff << (8 - take)) & 0xff;
    if ((b[i]! & mask) !== (net[i]! & mask)) return false;
  }
  return true;
}

function classifyV4(b: Uint8Array): AddressClass {
  if (b[0] === 169 && b[1] === 254 && b[2] === 169 && b[3] === 254) return "metadata";
  if (b.every((x) => x === 0)) return "unspecified";
  if (b.every((x) => x === 255)) return "broadcast";
  if (inV4(b, [0, 0, 0, 0], 8)) return "this_network";
  if (inV4(b, [127, 0, 0, 0], 8)) return "loopback";
  if (inV4(b, [10, 0, 0, 0], 8) || inV4(b, [172, 16, 0, 0], 12) || inV4(b, [192, 168, 0, 0], 16)) return "private";
  if (inV4(b, [169, 254, 0, 0], 16)) return "link_local";
  if (inV4(b, [100, 64, 0, 0], 10)) return "cgnat";
  if (inV4(b, [224, 0, 0, 0], 4)) return "multicast";
  if (inV4(b, [192, 0, 2, 0], 24) || inV4(b, [198, 51, 100, 0], 24) || inV4(b, [203, 0, 113, 0], 24)) return "documentation";
  // IETF protocol assignments, benchmarking, 6to4 relay anycast, class E.
  if (inV4(b, [192, 0, 0, 0], 24) || inV4(b, [198, 18, 0, 0], 15) || inV4(b, [192, 88, 99, 0], 24) || inV4(b, [240, 0, 0, 0], 4)) return "reserved";
  return "public";
}

function prefix6(b: Uint8Array, bytes: readonly number[], bits: number): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const take = Math.min(8, bits - i * 8);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((b[i]! & mask) !== ((bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

const METADATA_V6 = parseV6("fd00:ec2::254")!;

function classifyV6(b: Uint8Array): AddressClass {
  const zeros = (from: number, to: number): boolean => b.subarray(from, to).every((x) => x === 0);
  if (b.every((x, i) => x === METADATA_V6[i])) return "metadata";
  if (zeros(0, 16)) return "unspecified";
  if (zeros(0, 15) && b[15] === 1) return "loopback";
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT translated), ::a.b.c.d (deprecated compatible).
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(b.subarray(12));
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return classifyV4(b.subarray(12));
  if (zeros(0, 12)) return classifyV4(b.subarray(12));
  // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4; 64:ff9b:1::/48 is for local use.
  if (prefix6(b, [0x00, 0x64, 0xff, 0x9b], 32) && zeros(4, 12)) return classifyV4(b.subarray(12));
  if (prefix6(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return "private";
  // 6to4 2002:V4ADDR::/48 reaches the embedded IPv4.
  if (prefix6(b, [0x20, 0x02], 16)) return classifyV4(b.subarray(2, 6));
  if (prefix6(b, [0x20, 0x01, 0x0d, 0xb8], 32) || prefix6(b, [0x3f, 0xff], 20)) return "documentation";
  // Teredo (2001::/32) tunnels to an obfuscated IPv4 we cannot vouch for; discard-only 100::/64; ORCHID.
  if (prefix6(b, [0x20, 0x01, 0x00, 0x00], 32) || prefix6(b, [0x01, 0x00], 64) || prefix6(b, [0x20, 0x01, 0x00, 0x10], 28)) return "reserved";
  if (prefix6(b, [0xfe, 0x80], 10)) return "link_local";
  if (prefix6(b, [0xfe, 0xc0], 10)) return "private"; // deprecated site-local
  if (prefix6(b, [0xfc], 7)) return "unique_local";
  if (prefix6(b, [0xff], 8)) return "multicast";
  // Only global unicast (2000::/3) is routable on the internet; the rest is unassigned or reserved.
  if (!prefix6(b, [0x20], 3)) return "reserved";
  return "public";
}

/** The class of an IP literal (`invalid` when it is not one): loopback, private, metadata, public, and so on. */
export function classifyAddress(ip: string): AddressClass {
  const p = parseIpAddress(ip);
  if (!p) return "invalid";
  return p.version === 4 ? classifyV4(p.bytes) : classifyV6(p.bytes);
}

/** Whether the service must refuse to connect to `ip` by default: anything but a public unicast address. */
export function isBlockedAddress(ip: string): boolean {
  return classifyAddress(ip) !== "public";
}
