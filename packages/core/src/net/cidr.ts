/**
 * IP addresses and CIDR ranges, IPv4 and IPv6, for account allow-lists. Every address is held as 16 bytes:
 * IPv4 as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), so `10.0.0.0/8` matches both `10.1.2.3` and
 * `::ffff:10.1.2.3`, and one comparison covers both families.
 */
import { parseIpAddress } from "./ip-address.ts";

/** A parsed CIDR range: its network address (host bits cleared) and prefix length, both in 128-bit space. */
export interface Cidr {
  readonly bytes: Uint8Array;
  /** Prefix length over the 16-byte form (an IPv4 `/8` is 104). */
  readonly prefix: number;
}

/** Parses an IPv4 or IPv6 address (brackets and an IPv6 zone such as `%eth0` allowed) into its 16-byte form, or null. */
export function parseIp(text: string): Uint8Array | null {
  const parsed = parseIpAddress(text);
  if (parsed === null) return null;
  if (parsed.version === 6) return parsed.bytes;
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  out.set(parsed.bytes, 12);
  return out;
}

/** Parses `address/prefix` (or a bare address, a single host) into a Cidr with host bits cleared, or null. */
export function parseCidr(text: string): Cidr | null {
  const s = text.trim();
  const slash = s.indexOf("/");
  const addressText = slash < 0 ? s : s.slice(0, slash);
  const parsed = parseIpAddress(addressText);
  if (parsed === null) return null;
  const v4 = parsed.version === 4;
  const bytes = parseIp(addressText) as Uint8Array;
  const max = v4 ? 32 : 128;
  let length = max;
  if (slash >= 0) {
    const p = s.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p)) return null;
    length = Number(p);
    if (length > max) return null;
  }
  const prefix = v4 ? 96 + length : length;
  for (let bit = prefix; bit < 128; bit++) bytes[bit >> 3] = bytes[bit >> 3]! & ~(0x80 >> (bit & 7));
  return { bytes, prefix };
}

/** Whether `ip` (16 bytes, from parseIp) lies inside `cidr`. */
export function cidrContains(cidr: Cidr, ip: Uint8Array): boolean {
  const whole = cidr.prefix >> 3;
  for (let i = 0; i < whole; i++) if (ip[i] !== cidr.bytes[i]) return false;
  const rest = cidr.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((ip[whole]! ^ cidr.bytes[whole]!) & mask) === 0;
}

/** Whether the address text lies inside any of the ranges; an unparsable address is inside none. */
export function ipInRanges(address: string, ranges: readonly Cidr[]): boolean {
  const ip = parseIp(address);
  if (ip === null) return false;
  for (const r of ranges) if (cidrContains(r, ip)) return true;
  return false;
}
