import { describe, expect, it } from "vitest";
import * as core from "../index.ts";
import * as http from "../http/index.ts";
import { cidrContains, ipInRanges, parseCidr, parseIp } from "./cidr.ts";

const ranges = (...texts: string[]) => texts.map((t) => parseCidr(t)!);

describe("parseIp", () => {
  it("parses IPv4 into the IPv4-mapped form", () => {
    expect([...parseIp("10.1.2.3")!]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 1, 2, 3]);
  });
  it("parses IPv6 with compression, an IPv4 tail, brackets and a zone", () => {
    expect(parseIp("::1")![15]).toBe(1);
    expect([...parseIp("2001:db8::ff00:42:8329")!.slice(0, 4)]).toEqual([0x20, 0x01, 0x0d, 0xb8]);
    expect([...parseIp("::ffff:10.1.2.3")!]).toEqual([...parseIp("10.1.2.3")!]);
    expect(parseIp("[fe80::1%eth0]")).not.toBeNull();
    expect([...parseIp("::")!].every((b) => b === 0)).toBe(true);
  });
  it("refuses malformed addresses", () => {
    for (const bad of ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "g::1", ":1::2", "1::2:", "1.2.3.4::", "1:2:3:4:5:6:7", "abc"]) {
      expect(parseIp(bad), bad).toBeNull();
    }
  });
});

describe("parseCidr and matching", () => {
  it("IPv4 CIDR matches plain and v4-mapped addresses inside it, not outside", () => {
    const r = ranges("203.0.113.0/24");
    expect(ipInRanges("203.0.113.77", r)).toBe(true);
    expect(ipInRanges("::ffff:203.0.113.77", r)).toBe(true);
    expect(ipInRanges("203.0.114.1", r)).toBe(false);
    expect(ipInRanges("2001:db8::1", r)).toBe(false);
  });
  it("IPv6 CIDR matches on a non-byte prefix boundary", () => {
    const r = ranges("2001:db8:abcd:0010::/60");
    expect(ipInRanges("2001:db8:abcd:1f::1", r)).toBe(true);
    expect(ipInRanges("2001:db8:abcd:20::1", r)).toBe(false);
    expect(ipInRanges("10.0.0.1", r)).toBe(false);
  });
  it("a bare address is a single host; host bits are cleared; /0 matches its family", () => {
    expect(ipInRanges("198.51.100.7", ranges("198.51.100.7"))).toBe(true);
    expect(ipInRanges("198.51.100.8", ranges("198.51.100.7"))).toBe(false);
    expect(ipInRanges("10.9.9.9", ranges("10.1.2.3/8"))).toBe(true);
    expect(ipInRanges("8.8.8.8", ranges("0.0.0.0/0"))).toBe(true);
    expect(ipInRanges("2001:db8::1", ranges("0.0.0.0/0"))).toBe(false);
    expect(ipInRanges("2001:db8::1", ranges("::/0"))).toBe(true);
    expect(cidrContains(parseCidr("10.0.0.0/9")!, parseIp("10.127.255.255")!)).toBe(true);
    expect(cidrContains(parseCidr("10.0.0.0/9")!, parseIp("10.128.0.0")!)).toBe(false);
  });
  it("refuses bad prefixes and garbage", () => {
    for (const bad of ["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8", "nope/8", "10.0.0.0/08x"]) expect(parseCidr(bad), bad).toBeNull();
  });
  it("an unparsable client address matches nothing (fails closed)", () => {
    expect(ipInRanges("", ranges("0.0.0.0/0", "::/0"))).toBe(false);
    expect(ipInRanges("unknown", ranges("0.0.0.0/0"))).toBe(false);
  });
});

describe("entry points", () => {
  it("the CIDR helpers are exported from both \".\" and \"./http\"", () => {
    for (const entry of [core, http]) {
      expect([entry.parseIp, entry.parseCidr, entry.cidrContains, entry.ipInRanges]).toEqual([parseIp, parseCidr, cidrContains, ipInRanges]);
    }
  });
});
