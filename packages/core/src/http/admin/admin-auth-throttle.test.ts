import { describe, expect, it } from "vitest";
import { manualClock } from "../../clock/clock.ts";
import type { Logger } from "../../log/logger.ts";
import { ADMIN_TOKEN, kit, LIVE_HOST, T0 } from "../test-kit.ts";
import { adminAuthThrottle, throttleKey } from "./auth-throttle.ts";

const WRONG = "wrong-admin-token-0123456789abcdef";

function adminCall(token: string | null, headers: Record<string, string> = {}): Request {
  return new Request(`${LIVE_HOST}/api/v1/admin/accounts`, {
    method: "POST",
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), "content-type": "application/json", ...headers },
    body: JSON.stringify({ name: "Acme", tier: "growth" }),
  });
}

function recordingLogger(): Logger & { lines: { level: string; message: string; fields: unknown }[] } {
  const lines: { level: string; message: string; fields: unknown }[] = [];
  const at = (level: string) => (message: string, fields?: unknown) => void lines.push({ level, message, fields });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

describe("admin authentication throttle (issue 20, item 4)", () => {
  it("10 failures in a minute from one address: wrong tokens get 429 auth.too_many_failures with Retry-After; the correct token is still admitted", async () => {
    const logger = recordingLogger();
    const k = kit({ logger });
    const peer = "203.0.113.5";
    for (let i = 0; i < 10; i++) {
      const r = await k.call(adminCall(i % 2 === 0 ? WRONG : null), peer);
      expect([r.status, r.body.code], `attempt ${i + 1}`).toEqual([401, "admin.invalid_token"]);
      k.clock.advance(1000);
    }
    const refused = await k.call(adminCall(WRONG), peer);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "auth.too_many_failures", status: 429 });
    // The window began at the first failure, 10 s ago: 50 s remain.
    expect(refused.headers.get("retry-after")).toBe("50");
    expect(refused.headers.get("cache-control")).toBe("no-store");
    expect((await k.call(adminCall(null), peer)).status).toBe(429);

    // The operator, from the very same address, is never locked out.
    const admitted = await k.call(adminCall(ADMIN_TOKEN), peer);
    expect(admitted.status).toBe(201);
    // Another address is unaffected.
    expect((await k.call(adminCall(WRONG), "198.51.100.7")).status).toBe(401);

    // Exactly one log line, naming the address, never a token.
    const lines = logger.lines.filter((l) => l.message.includes("throttled"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", fields: { client_address: peer, failures: 10 } });
    expect(JSON.stringify(logger.lines)).not.toContain(WRONG);
    expect(JSON.stringify(logger.lines)).not.toContain(ADMIN_TOKEN);

    // Once the minute from the first failure is over, wrong tokens are 401 again.
    k.clock.advance(50_000);
    expect((await k.call(adminCall(WRONG), peer)).status).toBe(401);
  });

  it("failures spread over more than a minute are never throttled", async () => {
    const k = kit();
    for (let i = 0; i < 30; i++) {
      expect((await k.call(adminCall(WRONG), "203.0.113.9")).status).toBe(401);
      k.clock.advance(7000); // 9 per window of 60 s at most
    }
  });

  it("without trustProxy a spoofed X-Forwarded-For does not escape the throttle; with it, the forwarded address is the client", async () => {
    const k = kit();
    for (let i = 0; i < 10; i++) await k.call(adminCall(WRONG, { "x-forwarded-for": `192.0.2.${i}` }), "127.0.0.1");
    const r = await k.call(adminCall(WRONG, { "x-forwarded-for": "192.0.2.200" }), "127.0.0.1");
    expect([r.status, r.body.code]).toEqual([429, "auth.too_many_failures"]);

    const behindProxy = kit({ config: { trustProxy: true } });
    for (let i = 0; i < 10; i++) await behindProxy.call(adminCall(WRONG, { "x-forwarded-for": "192.0.2.1" }), "127.0.0.1");
    expect((await behindProxy.call(adminCall(WRONG, { "x-forwarded-for": "10.0.0.1, 192.0.2.1" }), "127.0.0.1")).status).toBe(429);
    // The proxy's own address is not throttled for everyone behind it.
    expect((await behindProxy.call(adminCall(WRONG, { "x-forwarded-for": "192.0.2.2" }), "127.0.0.1")).status).toBe(401);
  });

  it("trustProxy: rotating the leftmost X-Forwarded-For entries (the client's own) does not escape the throttle; the rightmost, the proxy's, is the client", async () => {
    // An appending proxy (nginx's $proxy_add_x_forwarded_for, ALBs) puts the real peer on the right of whatever the client sent.
    const k = kit({ config: { trustProxy: true } });
    for (let i = 0; i < 10; i++) expect((await k.call(adminCall(WRONG, { "x-forwarded-for": `198.51.100.${i}, 192.0.2.7` }), "10.0.0.1")).status).toBe(401);
    for (let i = 10; i < 40; i++) {
      const r = await k.call(adminCall(WRONG, { "x-forwarded-for": `198.51.100.${i}, 10.9.${i}.1, 192.0.2.7` }), "10.0.0.1");
      expect([r.status, r.body.code]).toEqual([429, "auth.too_many_failures"]);
    }
    // Two header lines arrive joined: the proxy's line is still the last.
    const twoLines = adminCall(WRONG);
    twoLines.headers.append("x-forwarded-for", "198.51.100.99");
    twoLines.headers.append("x-forwarded-for", "192.0.2.7");
    expect((await k.call(twoLines, "10.0.0.1")).status).toBe(429);
    // Another client behind the same proxy is not throttled, whatever it puts on the left.
    expect((await k.call(adminCall(WRONG, { "x-forwarded-for": "192.0.2.7, 192.0.2.8" }), "10.0.0.1")).status).toBe(401);
  });

  it("IPv6 addresses count per /64; IPv4-mapped addresses as their IPv4 address", async () => {
    expect(throttleKey("2001:db8:1:2::1")).toBe(throttleKey("2001:db8:1:2:ffff::9"));
    expect(throttleKey("2001:db8:1:2::1")).not.toBe(throttleKey("2001:db8:1:3::1"));
    expect(throttleKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(throttleKey("")).toBe("?");
    const k = kit();
    for (let i = 0; i < 10; i++) await k.call(adminCall(WRONG), `2001:db8:1:2::${i + 1}`);
    expect((await k.call(adminCall(WRONG), "2001:db8:1:2::abcd")).status).toBe(429);
    expect((await k.call(adminCall(WRONG), "2001:db8:1:3::1")).status).toBe(401);
  });

  it("remembers a bounded number of addresses (the stalest dropped first) and logs at most one line per 10 s", () => {
    const clock = manualClock(T0);
    const logger = recordingLogger();
    const t = adminAuthThrottle(clock, logger, { limit: 2, capacity: 3 });
    for (let i = 0; i < 100; i++) {
      t.failed(`198.51.100.${i}`);
      t.failed(`198.51.100.${i}`);
    }
    expect(t.size).toBe(3);
    expect(t.retryAfter("198.51.100.99")).toBe(60);
    expect(t.retryAfter("198.51.100.0")).toBe(0); // forgotten
    expect(logger.lines).toHaveLength(1);
    clock.advance(10_000);
    t.failed("203.0.113.1");
    t.failed("203.0.113.1");
    expect(logger.lines).toHaveLength(2);
    expect(logger.lines[1]!.fields).toMatchObject({ addresses_throttled: 100 });
  });
});

describe("/metrics bearer tokens share the throttle (issue 29)", () => {
  const METRICS = "metrics-token-for-throttle-tests-0123";
  const scrape = (token: string | null): Request => new Request(`${LIVE_HOST}/metrics`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });

  it("10 wrong metrics tokens from one address: the next is 429 auth.too_many_failures with Retry-After; the correct token still reads the metrics", async () => {
    const logger = recordingLogger();
    const k = kit({ logger, config: { metrics: { token: METRICS } } });
    const peer = "203.0.113.20";
    for (let i = 0; i < 10; i++) {
      const r = await k.call(scrape(i % 2 === 0 ? WRONG : null), peer);
      expect([r.status, r.body.code], `attempt ${i + 1}`).toEqual([401, "metrics.invalid_token"]);
    }
    const refused = await k.call(scrape(WRONG), peer);
    expect([refused.status, refused.body.code]).toEqual([429, "auth.too_many_failures"]);
    expect(Object.keys(refused.body)).toEqual(["detail", "code", "status"]);
    expect(refused.headers.get("retry-after")).toBe("60");
    const admitted = await k.call(scrape(METRICS), peer);
    expect(admitted.status).toBe(200);
    expect(admitted.body).toContain("benchdata_http_requests_total");
    expect((await k.call(scrape(WRONG), "198.51.100.20")).status).toBe(401);
    const lines = logger.lines.filter((l) => l.message.includes("throttled"));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toMatchObject({ client_address: peer, surface: "metrics", failures: 10 });
    expect(JSON.stringify(logger.lines)).not.toContain(METRICS);
  });

  it("one count for both surfaces: 5 wrong admin tokens and 5 wrong metrics tokens throttle both; the correct tokens are still admitted on each", async () => {
    const k = kit({ config: { metrics: { token: METRICS } } });
    const peer = "203.0.113.21";
    for (let i = 0; i < 5; i++) {
      expect((await k.call(adminCall(WRONG), peer)).status).toBe(401);
      expect((await k.call(scrape(WRONG), peer)).status).toBe(401);
    }
    expect((await k.call(adminCall(WRONG), peer)).body.code).toBe("auth.too_many_failures");
    expect((await k.call(scrape(WRONG), peer)).body.code).toBe("auth.too_many_failures");
    expect((await k.call(adminCall(ADMIN_TOKEN), peer)).status).toBe(201);
    expect((await k.call(scrape(METRICS), peer)).status).toBe(200);
  });

  it("with metrics off (no token) /metrics is 404 and counts nothing", async () => {
    const k = kit();
    const peer = "203.0.113.22";
    for (let i = 0; i < 12; i++) expect((await k.call(scrape(WRONG), peer)).status).toBe(404);
    expect((await k.call(adminCall(WRONG), peer)).status).toBe(401);
  });
});
