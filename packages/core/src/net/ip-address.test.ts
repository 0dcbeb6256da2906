import { isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyAddress, isBlockedAddress, isIpAddress, parseIpAddress } from "./ip-address.ts";

describe("classifyAddress", () => {
  const table: Array<[string, string]> = [
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["93.184.216.34", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.15.255.255", "public"],
    ["172.32.0.0", "public"],
    ["192.168.1.1", "private"],
    ["169.254.0.1", "link_local"],
    ["169.254.169.254", "metadata"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["100.128.0.0", "public"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "this_network"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["192.0.2.1", "documentation"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["[::1]", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["febf:ffff::1", "link_local"],
    ["fc00::1", "unique_local"],
    ["fd12:3456:789a::1", "unique_local"],
    ["fd00:ec2::254", "metadata"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::FFFF:7F00:0001", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:a9fe:a9fe", "metadata"],
    ["::ffff:8.8.8.8", "public"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::808:808", "public"],
    ["2002:7f00:1::", "loopback"],
    ["2002:c0a8:101::1", "private"],
    ["2002:808:808::1", "public"],
    ["2001:db8::1", "documentation"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
    ["2606:4700:4700::1111", "public"],
    ["2a00:1450:4001:82a::200e", "public"],
    ["4000::1", "reserved"],
    ["localhost", "invalid"],
    ["example.com", "invalid"],
    ["1.2.3", "invalid"],
    ["01.2.3.4", "invalid"],
    ["0x7f.0.0.1", "invalid"],
    ["256.1.1.1", "invalid"],
    ["1::2::3", "invalid"],
    ["1:2:3:4:5:6:7:8:9", "invalid"],
    ["", "invalid"],
  ];
  it.each(table)("%s is %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
    expect(isBlockedAddress(ip)).toBe(cls !== "public");
  });

  it("agrees with node:net isIP on what is an IP literal (random IPv4 and IPv6 texts)", () => {
    const v6 = fc.ipV6();
    const v4 = fc.ipV4();
    fc.assert(fc.property(fc.oneof(v4, v6, fc.string()), (text) => {
      expect(isIpAddress(text)).toBe(isIP(text) !== 0);
    }), { numRuns: 2000 });
  });

  it("an IPv4 address and its IPv4-mapped IPv6 forms (dotted and hex) always classify alike", () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => {
      const b = parseIpAddress(ip)!.bytes;
      const hex = `::ffff:${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
      expect(classifyAddress(`::ffff:${ip}`)).toBe(classifyAddress(ip));
      expect(classifyAddress(hex)).toBe(classifyAddress(ip));
    }), { numRuns: 2000 });
  });
});
