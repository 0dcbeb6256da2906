import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG, defineConfig, effectiveLimits } from "./config.ts";
import { resolveConfig } from "./config-schema.ts";

describe("config", () => {
  it("an empty file keeps every default of the contract", () => {
    const r = resolveConfig({});
    expect(r).toEqual({ ok: true, config: DEFAULT_CONFIG });
    expect(DEFAULT_CONFIG.tiers.developer).toEqual({ perMinute: 60, perDay: 10000, monthlyQuota: 100000, blockSize: 10000, blockPrice: 1000 });
    expect(DEFAULT_CONFIG.tiers.startup).toMatchObject({ perMinute: 100, perDay: 100000, monthlyQuota: 1000000, blockSize: 100000, blockPrice: 5000 });
    expect(DEFAULT_CONFIG.tiers.growth).toMatchObject({ perMinute: 300, perDay: 500000, monthlyQuota: 5000000, blockSize: 500000, blockPrice: 20000 });
    expect(DEFAULT_CONFIG.webhooks.retryDelaysSeconds).toEqual([0, 30, 300, 1800, 7200]);
    expect(DEFAULT_CONFIG.webhooks.timeoutSeconds).toBe(30);
    expect(DEFAULT_CONFIG.data).toEqual({ minSampleSize: 30, syntheticSeed: "benchdata" });
  });

  it("merges what the file gives over the defaults, keeping the rest", () => {
    const r = resolveConfig({ tiers: { developer: { perMinute: 5 } }, webhooks: { allowHttp: true } });
    expect(r.ok && r.config.tiers.developer).toEqual({ ...DEFAULT_CONFIG.tiers.developer, perMinute: 5 });
    expect(r.ok && r.config.webhooks).toEqual({ ...DEFAULT_CONFIG.webhooks, allowHttp: true });
  });

  it("an unknown key or a wrong type is refused with a message naming the key", () => {
    const unknown = resolveConfig({ webhooks: { retryDelays: [1] } });
    expect(unknown.ok).toBe(false);
    expect(!unknown.ok && unknown.errors.join("\n")).toContain("webhooks.retryDelays");
    const top = resolveConfig({ trustproxy: true });
    expect(!top.ok && top.errors.join("\n")).toContain("trustproxy");
    const wrong = resolveConfig({ trustProxy: "yes" });
    expect(!wrong.ok && wrong.errors.join("\n")).toContain("trustProxy");
    const neg = resolveConfig({ tiers: { growth: { perMinute: -1 } } });
    expect(!neg.ok && neg.errors.join("\n")).toContain("tiers.growth.perMinute");
    const emptyBlock = resolveConfig({ tiers: { developer: { blockSize: 0 } } });
    expect(!emptyBlock.ok && emptyBlock.errors.join("\n")).toContain("tiers.developer.blockSize");
    // The admin API's bounds (limit-bounds.ts): no negative price, no quota that overflows, no runaway ceiling.
    for (const [tier, path] of [
      [{ blockPrice: -1 }, "tiers.growth.blockPrice"],
      [{ monthlyQuota: 2 ** 53 }, "tiers.growth.monthlyQuota"],
      [{ blockSize: 1e13 }, "tiers.growth.blockSize"],
    ] as const) {
      const r = resolveConfig({ tiers: { growth: tier } });
      expect(!r.ok && r.errors.join("\n")).toContain(path);
    }
    const ceiling = resolveConfig({ billing: { maxAutoChargesPerPeriod: 5000 } });
    expect(!ceiling.ok && ceiling.errors.join("\n")).toContain("billing.maxAutoChargesPerPeriod");
    expect(resolveConfig({ target: "prod" }).ok).toBe(false);
    expect(resolveConfig([]).ok).toBe(false);
  });

  it("retention: documented defaults; whole days within bounds that keep what is still read (day counters in use, the console's 90-day chart)", () => {
    expect(DEFAULT_CONFIG.retention).toEqual({ deliveriesDays: 30, eventsDays: 30, sessionsDays: 7, dayCountersDays: 2, usageDays: 400, analyticsHourlyDays: 30, analyticsDailyDays: 400 });
    const set = resolveConfig({ retention: { deliveriesDays: 7, sessionsDays: 0, usageDays: 90, analyticsHourlyDays: 7 } });
    expect(set.ok && set.config.retention).toEqual({ deliveriesDays: 7, eventsDays: 30, sessionsDays: 0, dayCountersDays: 2, usageDays: 90, analyticsHourlyDays: 7, analyticsDailyDays: 400 });
    for (const [retention, message] of [
      [{ usageDays: 89 }, "retention.usageDays: must be at least 90 (the console's daily usage chart"],
      [{ dayCountersDays: 1 }, "retention.dayCountersDays: must be at least 2"],
      [{ deliveriesDays: 0 }, "retention.deliveriesDays: must be at least 1"],
      [{ eventsDays: 1.5 }, "retention.eventsDays: must be a whole number of days"],
      [{ sessionsDays: -1 }, "retention.sessionsDays: must be at least 0"],
      [{ usageDays: 4000 }, "retention.usageDays: must be at most 3650"],
      [{ deliveriesDays: "30" }, "retention.deliveriesDays"],
    ] as const) {
      const r = resolveConfig({ retention });
      expect(!r.ok && r.errors.join("\n")).toContain(message);
    }
    const unknown = resolveConfig({ retention: { attemptsDays: 3 } });
    expect(!unknown.ok && unknown.errors.join("\n")).toContain("retention.attemptsDays");
  });

  it("server.requestTimeoutSeconds: 30 by default; a number from 0.1 to 3600, never off (issue 29)", () => {
    expect(DEFAULT_CONFIG.server).toEqual({ requestTimeoutSeconds: 30 });
    const r = resolveConfig({ server: { requestTimeoutSeconds: 2.5 } });
    expect(r.ok && r.config.server).toEqual({ requestTimeoutSeconds: 2.5 });
    for (const bad of [0, -1, 3601, "30", null]) {
      const refused = resolveConfig({ server: { requestTimeoutSeconds: bad } });
      expect(!refused.ok && refused.errors.join("\n"), String(bad)).toContain("server.requestTimeoutSeconds");
    }
    const unknown = resolveConfig({ server: { idleTimeoutSeconds: 5 } });
    expect(!unknown.ok && unknown.errors.join("\n")).toContain("server.idleTimeoutSeconds");
  });

  it("account overrides win over the tier's limits", () => {
    expect(effectiveLimits(defineConfig({ tiers: { enterprise: { perMinute: 7 } } }), "enterprise", { perDay: 9 })).toMatchObject({ perMinute: 7, perDay: 9 });
  });
});
