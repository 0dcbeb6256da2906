import { describe, expect, it } from "vitest";
import { hashSecret } from "../keys/api-key.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { Storage } from "../storage/types.ts";
import { kit, LIVE_HOST, recorder, spread, T0, TEST_HOST } from "./test-kit.ts";

const BENCH = "/benchmarks?category=saas";

/** Memory storage whose named methods throw (a store that went away). */
function brokenStorage(...methods: string[]): Storage {
  const inner = createMemoryStorage();
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop === "string" && methods.includes(prop)) {
        return () => Promise.reject(new Error("connection refused to db at 10.0.0.5 with svc_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
      }
      return value;
    },
  });
}

describe("auth pipeline: key checks in the spec's order", () => {
  it("no Authorization header → 401 auth.missing_key; other schemes too", async () => {
    const k = kit();
    expect((await k.data(null, BENCH)).body).toEqual({ detail: expect.any(String), code: "auth.missing_key", status: 401 });
    const basic = await k.data(null, BENCH, { headers: { authorization: "Basic dXNlcjpwdw==" } });
    expect([basic.status, basic.body.code]).toEqual([401, "auth.missing_key"]);
    const empty = await k.data(null, BENCH, { headers: { authorization: "Bearer   " } });
    expect(empty.body.code).toBe("auth.missing_key");
  });

  it("malformed key → 401 auth.malformed_key (wrong prefix, length, characters)", async () => {
    const k = kit();
    for (const bad of ["svc_prod_" + "a".repeat(48), "svc_test_" + "a".repeat(47), "svc_test_" + "a".repeat(47) + "!", "sk_live_123"]) {
      const r = await k.data(bad, BENCH);
      expect([r.status, r.body.code], bad).toEqual([401, "auth.malformed_key"]);
    }
  });

  it("well-formed but unknown key → 401 auth.unknown_key", async () => {
    const k = kit();
    const r = await k.data("svc_test_" + "A".repeat(48), BENCH);
    expect([r.status, r.body.code]).toEqual([401, "auth.unknown_key"]);
  });

  it("the injected hashSecret is what keys and session tokens are looked up by (one call per data request)", async () => {
    const seen: string[] = [];
    const k = kit({
      hashSecret: (raw) => {
        seen.push(raw);
        return hashSecret(raw);
      },
    });
    const { session } = await k.account("growth");
    const { raw } = await k.key(session, "test");
    seen.length = 0;
    expect((await k.data(raw, BENCH, { host: TEST_HOST })).status).toBe(200);
    expect(seen).toEqual([raw]);
    expect((await k.console(session, "GET", "/keys")).status).toBe(200);
    expect(seen).toEqual([raw, session]);
    // A hasher that disagrees with the stored digests finds nothing: it really is the one used.
    const wrong = kit({ storage: k.storage, hashSecret: (s) => hashSecret(`${s}x`) });
    expect((await wrong.data(raw, BENCH, { host: TEST_HOST })).body.code).toBe("auth.unknown_key");
    expect((await wrong.console(session, "GET", "/keys")).body.code).toBe("console.invalid_session");
  });

  it("rotation: the old key gets 401 auth.inactive_key at once and the new key works", async () => {
    const k = kit();
    const { session } = await k.account();
    const key = await k.key(session);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    const rotated = await k.console(session, "POST", `/keys/${key.keyId}/rotate`);
    expect(rotated.status).toBe(200);
    const old = await k.data(key.raw, BENCH);
    expect([old.status, old.body.code]).toEqual([401, "auth.inactive_key"]);
    expect((await k.data(rotated.body.raw_key, BENCH)).status).toBe(200);
  });

  it("revocation: the key gets 401 auth.inactive_key", async () => {
    const k = kit();
    const { session } = await k.account();
    const key = await k.key(session);
    await k.console(session, "POST", `/keys/${key.keyId}/revoke`);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([401, "auth.inactive_key"]);
  });

});

describe("X-RateLimit headers on refusals after the key lookup (the request counts nothing)", () => {
  const reset = (at: number) => String(Math.ceil((at + 60_000) / 1000));
  const rate = (r: { headers: Headers }) => ["limit", "remaining", "reset"].map((n) => r.headers.get(`x-ratelimit-${n}`));

  /** An account whose own limits are 5 per minute and `perDay` per day. */
  async function limited(perDay = 1000, tier = "enterprise") {
    const k = kit();
    const { accountId, session } = await k.account(tier);
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { limits: { per_minute: 5, per_day: perDay } })).status).toBe(200);
    return { k, accountId, session };
  }
  const today = async (k: ReturnType<typeof kit>, session: string) => (await k.console(session, "GET", "/usage/summary")).body.today;

  it("401 auth.inactive_key (revoked): the key's window as it stands", async () => {
    const { k, session } = await limited();
    const key = await k.key(session);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    await k.console(session, "POST", `/keys/${key.keyId}/revoke`);
    k.clock.advance(1000);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([401, "auth.inactive_key"]);
    expect(rate(r)).toEqual(["5", "4", reset(T0)]);
    expect(await today(k, session)).toBe(1);
  });

  it("401 auth.inactive_key (secret replaced by a rotation): the rotated key's window", async () => {
    const { k, session } = await limited();
    const key = await k.key(session);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    const rotated = await k.console(session, "POST", `/keys/${key.keyId}/rotate`);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([401, "auth.inactive_key"]);
    expect(rate(r)).toEqual(["5", "4", reset(T0)]);
    expect((await k.data(rotated.body.raw_key, BENCH)).headers.get("x-ratelimit-remaining")).toBe("3");
  });

  it("403 auth.ip_not_allowed", async () => {
    const { k, accountId, session } = await limited();
    // The key first: the allow-list guards the console too (console-allow-list-http.test.ts).
    const key = await k.key(session);
    await k.admin("PATCH", `/accounts/${accountId}`, { allowed_cidrs: ["203.0.113.0/24"] });
    expect((await k.data(key.raw, BENCH, { clientAddress: "203.0.113.9" })).status).toBe(200);
    const r = await k.data(key.raw, BENCH, { clientAddress: "198.51.100.1" });
    expect([r.status, r.body.code]).toEqual([403, "auth.ip_not_allowed"]);
    expect(rate(r)).toEqual(["5", "4", reset(T0)]);
    await k.admin("PATCH", `/accounts/${accountId}`, { console_ip_exempt: true });
    expect(await today(k, session)).toBe(1);
  });

  it("403 auth.environment_mismatch", async () => {
    const { k, session } = await limited();
    const key = await k.key(session, "test");
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    const r = await k.data(key.raw, BENCH, { host: LIVE_HOST });
    expect([r.status, r.body.code]).toEqual([403, "auth.environment_mismatch"]);
    expect(rate(r)).toEqual(["5", "4", reset(T0)]);
    expect(await today(k, session)).toBe(1);
  });

  it("403 auth.live_key_in_browser, with the CORS headers that let the page read them", async () => {
    const { k, session } = await limited();
    const key = await k.key(session, "live");
    expect((await k.data(key.raw, BENCH)).status).toBe(404); // admitted: no live data imported
    const r = await k.data(key.raw, BENCH, { headers: { origin: "https://app.example.com" } });
    expect([r.status, r.body.code]).toEqual([403, "auth.live_key_in_browser"]);
    expect(rate(r)).toEqual(["5", "4", reset(T0)]);
    expect(r.headers.get("access-control-expose-headers")).toContain("X-RateLimit-Remaining");
    expect(await today(k, session)).toBe(1);
  });

  it("403 auth.insufficient_scope: a fresh key's full window", async () => {
    const { k, session } = await limited();
    const key = await k.key(session, "test", ["segments:read"]);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([403, "auth.insufficient_scope"]);
    expect(rate(r)).toEqual(["5", "5", reset(T0)]);
    expect(await today(k, session)).toBe(0);
  });

  it("they describe the day when it has fewer requests left, as on admitted responses", async () => {
    const { k, session } = await limited(2);
    const key = await k.key(session, "test", ["segments:read"]);
    const other = await k.key(session);
    expect((await k.data(other.raw, BENCH)).status).toBe(200);
    const r = await k.data(key.raw, BENCH);
    expect(r.status).toBe(403);
    expect(rate(r)).toEqual(["2", "1", String(Date.parse("2026-11-11T00:00:00Z") / 1000)]);
  });

  it("no headers when the key is missing, malformed or unknown (no key was found)", async () => {
    const k = kit();
    for (const raw of [null, "svc_test_short", "svc_test_" + "A".repeat(48)]) {
      const r = await k.data(raw, BENCH);
      expect(r.status, String(raw)).toBe(401);
      expect(r.headers.get("x-ratelimit-limit"), String(raw)).toBeNull();
    }
  });

  it("no headers where no window governs the request: an unknown /data/v1 path, another method, a preflight (docs/api.md says why)", async () => {
    const k = kit();
    const { session } = await k.account();
    const { raw } = await k.key(session);
    const unknown = await k.data(raw, "/benchmarks/nope?category=saas");
    const method = await k.data(raw, BENCH, { method: "DELETE" });
    const preflight = await k.data(null, BENCH, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "GET" } });
    expect([unknown.status, method.status, preflight.status]).toEqual([404, 405, 204]);
    for (const r of [unknown, method, preflight]) expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    // And none of them used a slot: the key's next request still has its whole minute.
    const next = await k.data(raw, BENCH);
    expect(Number(next.headers.get("x-ratelimit-limit")) - Number(next.headers.get("x-ratelimit-remaining"))).toBe(1);
  });

  it("a store that cannot peek costs the headers only: the refusal stands (never a 503), logged as a warning", async () => {
    const warnings: string[] = [];
    const logger = { info() {}, error() {}, warn: (m: string, f?: object) => warnings.push(m + JSON.stringify(f)) };
    const k = kit({ storage: brokenStorage("peekLimits"), logger });
    const { session } = await k.account();
    const key = await k.key(session, "test", ["segments:read"]);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([403, "auth.insufficient_scope"]);
    expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toContain("svc_live_A");
  });
});

describe("auth pipeline: IP allow-list", () => {
  async function restricted(cidrs: string[], config = {}) {
    const k = kit({ config });
    const { accountId, session } = await k.account("enterprise");
    // The key first: the allow-list guards the console too (console-allow-list-http.test.ts).
    const key = await k.key(session);
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { allowed_cidrs: cidrs })).status).toBe(200);
    return { k, key };
  }

  it("IPv4 CIDR: inside allowed (plain and v4-mapped), outside 403 auth.ip_not_allowed", async () => {
    const { k, key } = await restricted(["203.0.113.0/24"]);
    expect((await k.data(key.raw, BENCH, { clientAddress: "203.0.113.9" })).status).toBe(200);
    expect((await k.data(key.raw, BENCH, { clientAddress: "::ffff:203.0.113.9" })).status).toBe(200);
    const out = await k.data(key.raw, BENCH, { clientAddress: "198.51.100.1" });
    expect([out.status, out.body.code]).toEqual([403, "auth.ip_not_allowed"]);
  });

  it("IPv6 CIDR: inside allowed, outside refused", async () => {
    const { k, key } = await restricted(["2001:db8:1234::/48"]);
    expect((await k.data(key.raw, BENCH, { clientAddress: "2001:db8:1234:ff::7" })).status).toBe(200);
    expect((await k.data(key.raw, BENCH, { clientAddress: "2001:db8:1235::7" })).body.code).toBe("auth.ip_not_allowed");
  });

  it("unknown client address with an allow-list fails closed", async () => {
    const { k, key } = await restricted(["0.0.0.0/0"]);
    expect((await k.data(key.raw, BENCH)).body.code).toBe("auth.ip_not_allowed");
  });

  it("X-Forwarded-For is ignored unless trustProxy; then its rightmost entry (the proxy's) is the client, and an inside address the client put on the left does not pass", async () => {
    const plain = await restricted(["203.0.113.0/24"]);
    const spoof = await plain.k.data(plain.key.raw, BENCH, { clientAddress: "10.0.0.1", headers: { "x-forwarded-for": "203.0.113.5" } });
    expect(spoof.body.code).toBe("auth.ip_not_allowed");
    const proxied = await restricted(["203.0.113.0/24"], { trustProxy: true });
    expect((await proxied.k.data(proxied.key.raw, BENCH, { clientAddress: "10.0.0.1", headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.5" } })).status).toBe(200);
    expect((await proxied.k.data(proxied.key.raw, BENCH, { clientAddress: "203.0.113.5", headers: { "x-forwarded-for": "203.0.113.5, 198.51.100.1" } })).status).toBe(403);
  });

  it("the allow-list is checked before the environment (after the key is found active)", async () => {
    const { k, key } = await restricted(["203.0.113.0/24"]);
    const r = await k.data(key.raw, BENCH, { clientAddress: "198.51.100.1", host: LIVE_HOST });
    expect(r.body.code).toBe("auth.ip_not_allowed");
  });
});

describe("auth pipeline: environment and browsers", () => {
  it("host mode: sandbox./test. hosts target test, others live; a mismatch is 403 auth.environment_mismatch", async () => {
    const k = kit();
    const { session } = await k.account();
    const test = await k.key(session, "test");
    const live = await k.key(session, "live");
    expect((await k.data(test.raw, BENCH, { host: "http://sandbox.example.com" })).status).toBe(200);
    expect((await k.data(test.raw, BENCH, { host: "http://test.example.com:8080" })).status).toBe(200);
    const testOnLive = await k.data(test.raw, BENCH, { host: "http://api.example.com" });
    expect([testOnLive.status, testOnLive.body.code]).toEqual([403, "auth.environment_mismatch"]);
    const liveOnTest = await k.data(live.raw, BENCH, { host: "http://sandbox.example.com" });
    expect([liveOnTest.status, liveOnTest.body.code]).toEqual([403, "auth.environment_mismatch"]);
  });

  it("host mode reads the Host header when present (the adapter's view of the request)", async () => {
    const k = kit();
    const { session } = await k.account();
    const test = await k.key(session, "test");
    expect((await k.data(test.raw, BENCH, { host: "http://127.0.0.1:3000", headers: { host: "sandbox.benchdata.io" } })).status).toBe(200);
  });

  it("target live: test keys are refused everywhere; target test: live keys are", async () => {
    const live = kit({ config: { target: "live" } });
    const a = await live.account();
    const t = await live.key(a.session, "test");
    expect((await live.data(t.raw, BENCH, { host: TEST_HOST })).body.code).toBe("auth.environment_mismatch");
    const test = kit({ config: { target: "test" } });
    const b = await test.account();
    const l = await test.key(b.session, "live");
    expect((await test.data(l.raw, BENCH, { host: LIVE_HOST })).body.code).toBe("auth.environment_mismatch");
    const t2 = await test.key(b.session, "test");
    expect((await test.data(t2.raw, BENCH, { host: LIVE_HOST })).status).toBe(200);
  });

  it("a live key with an Origin header → 403 auth.live_key_in_browser", async () => {
    const k = kit();
    const { session } = await k.account();
    const live = await k.key(session, "live");
    const r = await k.data(live.raw, BENCH, { headers: { origin: "https://app.example.com" } });
    expect([r.status, r.body.code]).toEqual([403, "auth.live_key_in_browser"]);
  });

  it("CORS: test keys work from browsers; responses and errors carry Access-Control-Allow-Origin", async () => {
    const k = kit();
    const { session } = await k.account();
    const test = await k.key(session, "test");
    const ok = await k.data(test.raw, BENCH, { headers: { origin: "https://app.example.com" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("*");
    expect(ok.headers.get("access-control-expose-headers")).toContain("X-RateLimit-Remaining");
    const bad = await k.data(test.raw, "/benchmarks?category=nope", { headers: { origin: "https://app.example.com" } });
    expect(bad.status).toBe(422);
    expect(bad.headers.get("access-control-allow-origin")).toBe("*");
    const unknown = await k.data("svc_test_" + "Z".repeat(48), BENCH, { headers: { origin: "https://x.example" } });
    expect(unknown.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("CORS preflight: OPTIONS on /data/v1/* answers 204 allowing Authorization", async () => {
    const k = kit();
    const r = await k.call(new Request(`${TEST_HOST}/data/v1/benchmarks/percentile`, { method: "OPTIONS", headers: { origin: "https://app.example.com", "access-control-request-method": "GET", "access-control-request-headers": "authorization" } }));
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
    expect(r.headers.get("access-control-allow-methods")).toMatch(/GET/);
  });
});

describe("auth pipeline: scopes", () => {
  it("a key without the endpoint's scope → 403 auth.insufficient_scope naming it", async () => {
    const k = kit();
    const { session } = await k.account();
    const key = await k.key(session, "test", ["segments:read"]);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([403, "auth.insufficient_scope"]);
    expect(r.body.detail).toContain("benchmarks:read");
  });

  it("GET /merchant/compare needs both merchant:read and compare:read; the detail names the missing one", async () => {
    const k = kit();
    const { session } = await k.account("growth");
    const onlyMerchant = await k.key(session, "test", ["merchant:read"]);
    const r = await k.data(onlyMerchant.raw, "/merchant/compare");
    expect(r.body.code).toBe("auth.insufficient_scope");
    expect(r.body.detail).toContain("compare:read");
    expect(r.body.detail).not.toContain("merchant:read");
    const both = await k.key(session, "test", ["merchant:read", "compare:read"]);
    // Past the scope check (what the endpoint then answers is its own business).
    expect((await k.data(both.raw, "/merchant/compare")).body.code).not.toBe("auth.insufficient_scope");
  });

  it("the detail says `scope` for one missing scope and `scopes` for several", async () => {
    const k = kit();
    const { session } = await k.account("growth");
    const neither = await k.key(session, "test", ["benchmarks:read"]);
    const r = await k.data(neither.raw, "/merchant/compare");
    expect(r.body.detail).toBe("This key lacks the scopes `merchant:read` and `compare:read` required by GET /data/v1/merchant/compare.");
    const one = await k.key(session, "test", ["segments:read"]);
    expect((await k.data(one.raw, BENCH)).body.detail).toMatch(/^This key lacks the scope `benchmarks:read` required by /);
  });
});

describe("rate limits", () => {
  it("429 after the per-minute limit: X-RateLimit-Limit/Remaining 0/Reset and the exact Retry-After", async () => {
    const k = kit({ config: { tiers: { developer: { perMinute: 3 } } } });
    const { session } = await k.account("developer");
    const key = await k.key(session);
    for (let i = 0; i < 3; i++) {
      const r = await k.data(key.raw, BENCH);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("3");
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(2 - i));
      // The oldest counted request (at T0) leaves the window at T0 + 60 s; ceil to whole seconds.
      expect(r.headers.get("x-ratelimit-reset")).toBe(String(Math.ceil((T0 + 60_000) / 1000)));
    }
    k.clock.advance(10_400);
    const limited = await k.data(key.raw, BENCH);
    expect([limited.status, limited.body.code]).toEqual([429, "rate_limit.exceeded"]);
    expect(limited.body.detail).toMatch(/minute/);
    expect(limited.headers.get("x-ratelimit-limit")).toBe("3");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(limited.headers.get("x-ratelimit-reset")).toBe(String(Math.ceil((T0 + 60_000) / 1000)));
    expect(limited.headers.get("retry-after")).toBe("50"); // 49.6 s, rounded up
    k.clock.advance(49_600);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
  });

  it("429 after the daily limit names the day window; the headers report the day when it binds", async () => {
    const k = kit({ config: { tiers: { developer: { perMinute: 100, perDay: 2 } } } });
    const { session } = await k.account("developer");
    const key = await k.key(session);
    const first = await k.data(key.raw, BENCH);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    const midnight = Date.parse("2026-11-11T00:00:00Z");
    expect(first.headers.get("x-ratelimit-reset")).toBe(String(midnight / 1000));
    await k.data(key.raw, BENCH);
    const limited = await k.data(key.raw, BENCH);
    expect(limited.status).toBe(429);
    expect(limited.body.detail).toMatch(/day/);
    expect(limited.headers.get("retry-after")).toBe(String(Math.ceil((midnight - T0) / 1000)));
  });

  it("X-RateLimit headers are on handler errors too (the request was admitted and counted)", async () => {
    const k = kit();
    const { session } = await k.account();
    const key = await k.key(session);
    const r = await k.data(key.raw, "/benchmarks/percentile?category=saas&metric=churn_rate");
    expect(r.status).toBe(422);
    expect(r.headers.get("x-ratelimit-remaining")).toBe("299");
  });
});

describe("quota", () => {
  const tiny = { tiers: { developer: { perMinute: 100, monthlyQuota: 3, blockSize: 2, blockPrice: 500 } } };

  it("402 quota.exhausted after the quota; exactly one charge is requested; access resumes once paid", async () => {
    const chargeRequested = recorder<[string]>();
    const eventsWritten = recorder<[]>();
    const k = kit({ config: tiny, hooks: { chargeRequested, eventsWritten } });
    const { accountId, session } = await k.account("developer");
    const live = await k.key(session, "live");
    await k.publish("saas", "all", "2026-Q3", "gross_margin", spread(40, 0.2, 0.9));
    eventsWritten.calls.length = 0;
    for (let i = 0; i < 3; i++) expect((await k.data(live.raw, BENCH)).status).toBe(200);
    // 80% of 3 rounds up to the 3rd call: quota.warning was written.
    expect(eventsWritten.calls).toHaveLength(1);
    const exhausted = await k.data(live.raw, BENCH);
    expect([exhausted.status, exhausted.body.code]).toEqual([402, "quota.exhausted"]);
    expect(exhausted.body.detail).toMatch(/charge/);
    expect(exhausted.headers.get("x-ratelimit-limit")).toBe("100");
    expect(chargeRequested.calls).toHaveLength(1);
    const invoiceId = chargeRequested.calls[0]![0];
    expect(invoiceId).toMatch(/^inv_/);
    expect((await k.data(live.raw, BENCH)).status).toBe(402);
    expect(chargeRequested.calls).toHaveLength(1);

    const invoices = await k.console(session, "GET", "/invoices");
    expect(invoices.body.data).toEqual([expect.objectContaining({ invoice_id: invoiceId, status: "pending", amount: 500, currency: "usd", block: 1 })]);
    const [claimed] = await k.storage.claimCharges({ now: k.clock.now(), leaseMs: 60_000, limit: 10 });
    await k.storage.settleCharge({ invoiceId, leaseToken: claimed!.leaseToken, outcome: { status: "paid", processorRef: "pi_1", at: k.clock.now() }, eventIds: { exhausted: "evt_01J00000000000000000000001", result: "evt_01J00000000000000000000002" } });
    expect((await k.data(live.raw, BENCH)).status).toBe(200);
    const usage = await k.console(session, "GET", "/usage/summary");
    expect(usage.body).toMatchObject({ month: 4, monthly_limit: 5, token_balance: 1 });
    expect(accountId).toMatch(/^acc_/);
  });

  it("test keys are rate limited but never counted in the month's usage", async () => {
    const k = kit({ config: tiny });
    const { session } = await k.account("developer");
    const test = await k.key(session, "test");
    for (let i = 0; i < 5; i++) expect((await k.data(test.raw, BENCH)).status).toBe(200);
    const usage = await k.console(session, "GET", "/usage/summary");
    expect(usage.body).toMatchObject({ today: 5, month: 0, monthly_limit: 3, token_balance: 3 });
  });
});

describe("fail closed", () => {
  it("key lookup failing → 503 service.unavailable, logged without the key", async () => {
    const errors: string[] = [];
    const logger = { info() {}, warn() {}, error: (m: string, f?: object) => errors.push(m + JSON.stringify(f)) };
    const k = kit({ storage: brokenStorage("findKeyByHash"), logger });
    const raw = "svc_test_" + "Q".repeat(48);
    const r = await k.data(raw, BENCH);
    expect(r.body).toEqual({ detail: expect.any(String), code: "service.unavailable", status: 503 });
    expect(errors.length).toBe(1);
    expect(errors.join()).not.toContain("Q".repeat(20));
    expect(errors.join()).not.toContain("A".repeat(20));
  });

  it("admit failing → 503, never an uncounted 200", async () => {
    const storage = brokenStorage("admit");
    const k = kit({ storage });
    const { session } = await k.account();
    const key = await k.key(session);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([503, "service.unavailable"]);
  });

  it("live data source failing → 503", async () => {
    const k = kit({ liveData: { latestPeriod: () => Promise.reject(new Error("down")), recentPeriods: () => Promise.reject(new Error("down")), cells: () => Promise.reject(new Error("down")), segments: () => Promise.reject(new Error("down")) } });
    const { session } = await k.account();
    const live = await k.key(session, "live");
    expect((await k.data(live.raw, BENCH)).status).toBe(503);
  });

  it("console storage failing → 503 (not 500)", async () => {
    const k = kit({ storage: brokenStorage("listKeys") });
    const { session } = await k.account();
    const r = await k.console(session, "GET", "/keys");
    expect([r.status, r.body.code]).toEqual([503, "service.unavailable"]);
  });
});

/** Memory storage counting calls per method; `stale` makes every admission report a changed key. */
function countingStorage(options: { stale?: boolean; ignoreExpect?: boolean } = {}): { storage: Storage; calls: Map<string, number> } {
  const inner = createMemoryStorage();
  const calls = new Map<string, number>();
  const storage = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop !== "string" || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        if (prop === "admit" && options.stale) return Promise.resolve({ kind: "stale", now: T0 });
        // A non-conforming store: decides as if no expectation had been sent.
        if (prop === "admit" && options.ignoreExpect) return (value as (...a: unknown[]) => unknown).apply(target, [{ ...(args[0] as object), expect: undefined }]);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { storage, calls };
}

describe("auth pipeline: remembered key lookups", () => {
  const today = async (k: ReturnType<typeof kit>, session: string) => (await k.console(session, "GET", "/usage/summary")).body.today;

  it("a key seen before costs one storage call (the admission checks the remembered lookup)", async () => {
    const { storage, calls } = countingStorage();
    const k = kit({ storage });
    const { session } = await k.account();
    const key = await k.key(session);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    const lookups = calls.get("findKeyByHash") ?? 0;
    for (let i = 0; i < 3; i++) expect((await k.data(key.raw, BENCH)).status).toBe(200);
    expect(calls.get("findKeyByHash") ?? 0).toBe(lookups);
  });

  it("revocation by another process: the very next request here gets 401 auth.inactive_key, though its lookup was remembered", async () => {
    const k = kit();
    const { accountId, session } = await k.account();
    const key = await k.key(session);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    // Straight to storage, as another instance sharing the database would.
    await k.storage.revokeKey({ accountId, keyId: key.keyId, now: T0, eventId: "evt_01JD0000000000000000000001" });
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([401, "auth.inactive_key"]);
    expect(await today(k, session)).toBe(1);
  });

  it("an IP allow-list set by another process applies to the very next request", async () => {
    const k = kit();
    const { accountId, session } = await k.account();
    const key = await k.key(session);
    expect((await k.data(key.raw, BENCH, { clientAddress: "198.51.100.1" })).status).toBe(200);
    await k.storage.updateAccount(accountId, { allowedCidrs: ["203.0.113.0/24"] });
    const r = await k.data(key.raw, BENCH, { clientAddress: "198.51.100.1" });
    expect([r.status, r.body.code]).toEqual([403, "auth.ip_not_allowed"]);
    expect((await k.data(key.raw, BENCH, { clientAddress: "203.0.113.9" })).status).toBe(200);
  });

  it("a refusal is decided on a fresh lookup: an allow-list lifted elsewhere admits the next request at once", async () => {
    const k = kit();
    const { accountId, session } = await k.account();
    const key = await k.key(session);
    await k.storage.updateAccount(accountId, { allowedCidrs: ["203.0.113.0/24"] });
    expect((await k.data(key.raw, BENCH, { clientAddress: "203.0.113.9" })).status).toBe(200);
    await k.storage.updateAccount(accountId, { allowedCidrs: [] });
    expect((await k.data(key.raw, BENCH, { clientAddress: "198.51.100.1" })).status).toBe(200);
  });

  it("a store that ignores `expect` cannot keep a revoked key alive here beyond the lookup's 60 s", async () => {
    const { storage } = countingStorage({ ignoreExpect: true });
    const k = kit({ storage });
    const { accountId, session } = await k.account();
    const key = await k.key(session);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    await storage.revokeKey({ accountId, keyId: key.keyId, now: T0, eventId: "evt_01JD0000000000000000000002" });
    k.clock.advance(59_000);
    expect((await k.data(key.raw, BENCH)).status).toBe(200);
    k.clock.advance(1_000);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([401, "auth.inactive_key"]);
  });

  it("a key that keeps changing under every admission ends in 503 service.unavailable, never an uncounted 200", async () => {
    const { storage, calls } = countingStorage({ stale: true });
    const k = kit({ storage });
    const { session } = await k.account();
    const key = await k.key(session);
    const r = await k.data(key.raw, BENCH);
    expect([r.status, r.body.code]).toEqual([503, "service.unavailable"]);
    expect(calls.get("admit")).toBe(3);
  });
});
