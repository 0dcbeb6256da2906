import { beforeAll, describe, expect, it } from "vitest";
import { CATEGORIES, METRICS, metricsOf } from "../data/catalog.ts";
import type { Cell } from "../data/source.ts";
import { createSyntheticSource, SYNTHETIC_LATEST_QUARTER } from "../data/synthetic.ts";
import { roundTo1 } from "../stats/round-to1.ts";
import type { Kit } from "./test-kit.ts";
import { kit, spread } from "./test-kit.ts";

let k: Kit;
let testKey: string;
const synthetic = createSyntheticSource("benchdata");

async function syntheticCell(category: "saas" | "ecommerce", metric: (typeof METRICS)[number], period: string = SYNTHETIC_LATEST_QUARTER, segment = "all"): Promise<Cell> {
  return (await synthetic.cells(category, segment, period, [metric])).get(metric)!;
}

// Independent reference implementations (not the stats module): numpy's linear quantile and scipy's mean rank.
function quantile(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  return sorted[lo]! + (h - lo) * ((sorted[Math.min(lo + 1, sorted.length - 1)] ?? 0) - sorted[lo]!);
}
function meanOf(xs: Float64Array): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

beforeAll(async () => {
  k = kit({ config: { tiers: { growth: { perMinute: 10_000 } } } });
  const { session } = await k.account("enterprise");
  testKey = (await k.key(session, "test", ["benchmarks:read", "segments:read", "merchant:read", "merchant:write", "insights:read", "compare:read", "score:read", "report:read", "export:read"])).raw;
});

const get = (path: string) => k.data(testKey, path);

describe("GET /data/v1/benchmarks", () => {
  it("returns the spec's shape with every metric of the category, latest quarter by default, segment all", async () => {
    const r = await get("/benchmarks?category=ecommerce");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["category", "segment", "period", "generated_at", "sample_size", "metrics"]);
    expect(r.body).toMatchObject({ category: "ecommerce", segment: "all", period: SYNTHETIC_LATEST_QUARTER, generated_at: "2026-11-10T12:00:00.250Z" });
    expect(Object.keys(r.body.metrics)).toEqual([...metricsOf("ecommerce")]);
    for (const set of Object.values(r.body.metrics)) expect(Object.keys(set as object)).toEqual(["p10", "p25", "p50", "p75", "p90", "mean"]);
    expect(Number.isInteger(r.body.sample_size)).toBe(true);
  });

  it("numbers match the cell: type-7 percentiles and the mean, rounded to 6 decimals", async () => {
    const r = await get("/benchmarks?category=saas");
    const cell = await syntheticCell("saas", "churn_rate");
    const set = r.body.metrics.churn_rate;
    for (const [name, q] of [["p10", 0.1], ["p25", 0.25], ["p50", 0.5], ["p75", 0.75], ["p90", 0.9]] as const) expect(set[name]).toBeCloseTo(quantile(cell.sorted, q), 6);
    expect(set.mean).toBeCloseTo(meanOf(cell.sorted), 6);
    expect(r.body.sample_size).toBe(cell.sampleSize);
  });

  it("accepts period in quarterly and monthly form, and a segment", async () => {
    expect((await get("/benchmarks?category=saas&period=2025-Q2")).body.period).toBe("2025-Q2");
    expect((await get("/benchmarks?category=saas&period=2026-08")).body.period).toBe("2026-08");
    const segment = (await synthetic.segments("saas"))[0]!;
    const r = await get(`/benchmarks?category=saas&segment=${segment}`);
    expect(r.body.segment).toBe(segment);
    expect(r.body.sample_size).toBe((await syntheticCell("saas", "gross_margin", SYNTHETIC_LATEST_QUARTER, segment)).sampleSize);
  });

  it("an empty segment → 422 validation.invalid_parameter", async () => {
    expect((await get("/benchmarks?category=saas&segment=")).body.code).toBe("validation.invalid_parameter");
  });

  it("unknown query parameters are ignored", async () => {
    expect((await get("/benchmarks?category=saas&utm_source=x&foo=")).status).toBe(200);
  });

  it("missing category → 422 validation.missing_parameter naming it", async () => {
    const r = await get("/benchmarks");
    expect(r.body).toEqual({ detail: expect.stringContaining("`category`"), code: "validation.missing_parameter", status: 422 });
  });

  it("bad category → 422 validation.invalid_category listing the valid values", async () => {
    const r = await get("/benchmarks?category=crypto");
    expect(r.body.code).toBe("validation.invalid_category");
    for (const c of CATEGORIES) expect(r.body.detail).toContain(c);
  });

  it("bad period format → 422 validation.invalid_parameter", async () => {
    for (const p of ["2026Q3", "2026-Q5", "2026-13", "latest"]) {
      const r = await get(`/benchmarks?category=saas&period=${p}`);
      expect([r.status, r.body.code], p).toEqual([422, "validation.invalid_parameter"]);
    }
  });

  it("a period without data → 404 data.not_found; an unknown segment lists the known ones", async () => {
    const r = await get("/benchmarks?category=saas&period=1999-Q1");
    expect([r.status, r.body.code]).toEqual([404, "data.not_found"]);
    const s = await get("/benchmarks?category=saas&segment=nonexistent");
    expect(s.body.code).toBe("data.not_found");
    expect(s.body.detail).toContain((await synthetic.segments("saas"))[0]);
  });
});

describe("GET /data/v1/benchmarks/percentile", () => {
  it("ranks a value on the published percentile set (a cell below 1,000 × the minimum), with context and a direction-aware interpretation", async () => {
    const cell = await syntheticCell("saas", "gross_margin");
    const value = quantile(cell.sorted, 0.7);
    const r = await get(`/benchmarks/percentile?category=saas&metric=gross_margin&value=${value}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["metric", "value", "category", "segment", "period", "percentile", "interpretation", "context"]);
    // Between the published p50 and p75: linear on the curve through (p50, 50) and (p75, 75).
    const set = (await get("/benchmarks?category=saas")).body.metrics.gross_margin;
    const expected = Math.round((50 + (25 * (value - set.p50)) / (set.p75 - set.p50)) * 10) / 10;
    expect(r.body.percentile).toBeCloseTo(expected, 6);
    expect(r.body.value).toBe(value);
    expect(r.body.context).toEqual({ p50: expect.closeTo(quantile(cell.sorted, 0.5), 6), p75: expect.closeTo(quantile(cell.sorted, 0.75), 6), p90: expect.closeTo(quantile(cell.sorted, 0.9), 6) });
    expect(r.body.interpretation).toMatch(/Higher is better/);
  });

  it("a cell of at least 1,000 × the minimum answers scipy's exact rank (mean kind, one decimal)", async () => {
    const lk = kit();
    const { session } = await lk.account();
    const live = (await lk.key(session, "live")).raw;
    const values = Array.from({ length: 30_000 }, (_, i) => ((i * 7919) % 30_011) / 30_011);
    await lk.publish("saas", "all", "2026-Q3", "gross_margin", values);
    const sorted = Float64Array.from(values).sort();
    for (const value of [0.123456, 0.5, sorted[17]!, 0.999]) {
      let below = 0;
      let atOrBelow = 0;
      for (const x of sorted) {
        if (x < value) below++;
        if (x <= value) atOrBelow++;
      }
      const r = await lk.data(live, `/benchmarks/percentile?category=saas&metric=gross_margin&value=${value}`);
      expect(r.body.percentile).toBe(roundTo1(((below + atOrBelow) * 50) / sorted.length));
    }
  });

  it("interpretation knows lower-is-better metrics: a low churn rate is good", async () => {
    const cell = await syntheticCell("saas", "churn_rate");
    const r = await get(`/benchmarks/percentile?category=saas&metric=churn_rate&value=${quantile(cell.sorted, 0.05)}`);
    expect(r.body.percentile).toBeLessThan(10);
    expect(r.body.interpretation).toMatch(/Lower is better/);
    expect(r.body.interpretation).toMatch(/top 10%/);
  });

  it("missing value → missing_parameter; non-numeric value → invalid_parameter", async () => {
    expect((await get("/benchmarks/percentile?category=saas&metric=churn_rate")).body).toMatchObject({ code: "validation.missing_parameter", detail: expect.stringContaining("`value`") });
    for (const v of ["abc", "NaN", "Infinity", "0x10", "", "1e999"]) {
      expect((await get(`/benchmarks/percentile?category=saas&metric=churn_rate&value=${v}`)).body.code, v).toBe("validation.invalid_parameter");
    }
  });

  it("missing metric → missing_parameter; unknown metric → invalid_metric listing; not offered → metric_not_offered listing the category's", async () => {
    expect((await get("/benchmarks/percentile?category=saas&value=1")).body).toMatchObject({ code: "validation.missing_parameter", detail: expect.stringContaining("`metric`") });
    const unknown = await get("/benchmarks/percentile?category=saas&metric=ebitda&value=1");
    expect(unknown.body.code).toBe("validation.invalid_metric");
    for (const m of METRICS) expect(unknown.body.detail).toContain(m);
    const notOffered = await get("/benchmarks/percentile?category=saas&metric=take_rate&value=0.1");
    expect(notOffered.body.code).toBe("validation.metric_not_offered");
    expect(notOffered.body.detail).toContain(metricsOf("saas").join(", "));
  });

  it("accepts an explicit period", async () => {
    expect((await get("/benchmarks/percentile?category=saas&metric=churn_rate&value=0.05&period=2024-Q1")).body.period).toBe("2024-Q1");
  });
});

describe("GET /data/v1/benchmarks/distribution", () => {
  it("default 20 buckets from min to max; counts sum to the sample; pct in percent; stats match the cell", async () => {
    const cell = await syntheticCell("ecommerce", "average_order_value");
    const r = await get("/benchmarks/distribution?category=ecommerce&metric=average_order_value");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["metric", "category", "segment", "period", "histogram", "sample_size", "stats"]);
    expect(r.body.period).toBe(SYNTHETIC_LATEST_QUARTER);
    const h = r.body.histogram as { bucket_start: number; bucket_end: number; count: number; pct: number }[];
    expect(h).toHaveLength(20);
    expect(h[0]!.bucket_start).toBeCloseTo(cell.sorted[0]!, 6);
    expect(h[19]!.bucket_end).toBeCloseTo(cell.sorted[cell.sorted.length - 1]!, 6);
    expect(h.reduce((a, b) => a + b.count, 0)).toBe(cell.sorted.length);
    expect(h.reduce((a, b) => a + b.pct, 0)).toBeCloseTo(100, 3);
    for (let i = 1; i < h.length; i++) expect(h[i]!.bucket_start).toBe(h[i - 1]!.bucket_end);
    // numpy: the last bucket is closed, so the maximum is counted in it.
    const width = (cell.sorted[cell.sorted.length - 1]! - cell.sorted[0]!) / 20;
    const lastStart = cell.sorted[0]! + 19 * width;
    expect(h[19]!.count).toBe(cell.sorted.filter((x) => x >= lastStart).length);
    const m = meanOf(cell.sorted);
    const sd = Math.sqrt(cell.sorted.reduce((a, x) => a + (x - m) ** 2, 0) / cell.sorted.length);
    expect(r.body.stats).toEqual({ min: expect.closeTo(cell.sorted[0]!, 6), max: expect.closeTo(cell.sorted.at(-1)!, 6), mean: expect.closeTo(m, 6), std_dev: expect.closeTo(sd, 6) });
    expect(r.body.sample_size).toBe(cell.sampleSize);
  });

  it("buckets=1 and buckets=100 are accepted", async () => {
    expect((await get("/benchmarks/distribution?category=saas&metric=churn_rate&buckets=1")).body.histogram).toHaveLength(1);
    expect((await get("/benchmarks/distribution?category=saas&metric=churn_rate&buckets=100")).body.histogram).toHaveLength(100);
  });

  it("buckets outside 1–100 → 422 validation.out_of_range (never clamped)", async () => {
    for (const b of ["0", "101", "-3", "100000000000000000000"]) {
      const r = await get(`/benchmarks/distribution?category=saas&metric=churn_rate&buckets=${b}`);
      expect([r.status, r.body.code], b).toEqual([422, "validation.out_of_range"]);
    }
  });

  it("non-integer buckets → 422 validation.invalid_parameter", async () => {
    for (const b of ["2.5", "ten", "1e2", ""]) expect((await get(`/benchmarks/distribution?category=saas&metric=churn_rate&buckets=${b}`)).body.code, b).toBe("validation.invalid_parameter");
  });

  it("accepts an optional period", async () => {
    expect((await get("/benchmarks/distribution?category=saas&metric=churn_rate&period=2025-Q1")).body.period).toBe("2025-Q1");
  });
});

describe("GET /data/v1/benchmarks/history", () => {
  it("default 4 quarterly periods, ascending, ending at the latest, each with p25/p50/p75 and sample size", async () => {
    const r = await get("/benchmarks/history?category=saas&metric=gross_margin");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["metric", "category", "segment", "granularity", "history"]);
    expect(r.body.granularity).toBe("quarterly");
    expect(r.body.history.map((h: { period: string }) => h.period)).toEqual(["2025-Q4", "2026-Q1", "2026-Q2", "2026-Q3"]);
    const cell = await syntheticCell("saas", "gross_margin", "2026-Q1");
    expect(r.body.history[1]).toEqual({ period: "2026-Q1", p25: expect.closeTo(quantile(cell.sorted, 0.25), 6), p50: expect.closeTo(quantile(cell.sorted, 0.5), 6), p75: expect.closeTo(quantile(cell.sorted, 0.75), 6), sample_size: cell.sampleSize });
  });

  it("monthly granularity and periods=20 (the maximum)", async () => {
    const r = await get("/benchmarks/history?category=saas&metric=gross_margin&granularity=monthly&periods=20");
    expect(r.body.history).toHaveLength(20);
    expect(r.body.history.at(-1).period).toBe("2026-09");
    expect(r.body.history[0].period).toBe("2025-02");
  });

  it("periods outside 1–20 → out_of_range; bad granularity → invalid_parameter", async () => {
    expect((await get("/benchmarks/history?category=saas&metric=gross_margin&periods=21")).body.code).toBe("validation.out_of_range");
    expect((await get("/benchmarks/history?category=saas&metric=gross_margin&periods=0")).body.code).toBe("validation.out_of_range");
    expect((await get("/benchmarks/history?category=saas&metric=gross_margin&granularity=weekly")).body.code).toBe("validation.invalid_parameter");
    expect((await get("/benchmarks/history?category=saas&metric=burn_multiple&periods=x")).body.code).toBe("validation.invalid_parameter");
  });

  it("metric not offered → metric_not_offered", async () => {
    expect((await get("/benchmarks/history?category=retail&metric=churn_rate")).body.code).toBe("validation.metric_not_offered");
  });
});

describe("live data and the publication minimum", () => {
  async function liveKit() {
    const lk = kit();
    const { session } = await lk.account();
    const live = await lk.key(session, "live", ["benchmarks:read", "segments:read"]);
    return { lk, live: live.raw };
  }

  it("live keys read the imported data, not the synthetic set", async () => {
    const { lk, live } = await liveKit();
    await lk.publish("saas", "all", "2026-Q2", "gross_margin", spread(41, 0, 1));
    const r = await lk.data(live, "/benchmarks?category=saas");
    expect(r.body).toMatchObject({ period: "2026-Q2", sample_size: 41, metrics: { gross_margin: { p10: 0.1, p25: 0.25, p50: 0.5, p75: 0.75, p90: 0.9, mean: 0.5 } } });
    expect(Object.keys(r.body.metrics)).toEqual(["gross_margin"]);
  });

  it("segments are matched exactly as imported, URL-decoded", async () => {
    const { lk, live } = await liveKit();
    await lk.publish("retail", "smb / eu", "2026-Q3", "refund_rate", spread(30, 0, 0.2));
    const r = await lk.data(live, "/benchmarks?category=retail&segment=smb%20%2F%20eu");
    expect(r.body).toMatchObject({ segment: "smb / eu", sample_size: 30 });
    expect((await lk.data(live, "/benchmarks?category=retail&segment=smb+%2F+eu")).status).toBe(200);
    expect((await lk.data(live, "/benchmarks?category=retail")).body.code).toBe("data.not_found");
  });

  it("no live data at all → 404 data.not_found", async () => {
    const { lk, live } = await liveKit();
    expect((await lk.data(live, "/benchmarks?category=saas")).body.code).toBe("data.not_found");
    expect((await lk.data(live, "/benchmarks/history?category=saas&metric=churn_rate")).body.code).toBe("data.not_found");
  });

  it("/benchmarks includes only metrics meeting the minimum; sample_size counts the included metrics' distinct businesses", async () => {
    const { lk, live } = await liveKit();
    const ids = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
    // gross_margin: businesses 0..34; burn_multiple: 20..69 (15 in both); churn_rate (withheld): 100..128, reported by no one else.
    await lk.publish("saas", "all", "2026-Q3", "gross_margin", spread(35, 0, 1), ids(0, 35));
    await lk.publish("saas", "all", "2026-Q3", "churn_rate", spread(29, 0, 0.1), ids(100, 29));
    await lk.publish("saas", "all", "2026-Q3", "burn_multiple", spread(50, 0, 3), ids(20, 50));
    const r = await lk.data(live, "/benchmarks?category=saas");
    expect(Object.keys(r.body.metrics)).toEqual(["gross_margin", "burn_multiple"]);
    // 70 distinct businesses: not the largest cell (50), not the sum (85), and nothing of the withheld churn_rate's 29.
    expect(r.body.sample_size).toBe(70);
  });

  it("/benchmarks and /segments: 30 businesses report one metric and 30 others another → sample_size 60 (CONTRACT: distinct businesses)", async () => {
    const { lk, live } = await liveKit();
    const ids = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
    for (const segment of ["all", "dtc"]) {
      await lk.publish("ecommerce", segment, "2026-Q3", "gross_margin", spread(30, 0.2, 0.6), ids(0, 30));
      await lk.publish("ecommerce", segment, "2026-Q3", "revenue_growth", spread(30, 0, 0.5), ids(30, 30));
    }
    expect((await lk.data(live, "/benchmarks?category=ecommerce")).body.sample_size).toBe(60);
    expect((await lk.data(live, "/benchmarks?category=ecommerce&segment=dtc")).body.sample_size).toBe(60);
    expect((await lk.data(live, "/segments?category=ecommerce")).body.segments).toEqual([{ segment: "dtc", sample_size: 60, published: true, withheld_reason: null }]);
  });

  it("cells below the minimum → 404 data.insufficient_sample on every endpoint", async () => {
    const { lk, live } = await liveKit();
    await lk.publish("saas", "all", "2026-Q3", "churn_rate", spread(29, 0, 0.1));
    for (const path of ["/benchmarks?category=saas", "/benchmarks/percentile?category=saas&metric=churn_rate&value=0.05", "/benchmarks/distribution?category=saas&metric=churn_rate", "/benchmarks/history?category=saas&metric=churn_rate"]) {
      const r = await lk.data(live, path);
      expect([r.status, r.body.code], path).toEqual([404, "data.insufficient_sample"]);
      expect(r.body.detail).toContain("30");
    }
  });

  it("default period: the latest with data, a month when there is no quarter (CONTRACT); /benchmarks' quarter default says months exist", async () => {
    const { lk, live } = await liveKit();
    await lk.publish("fintech", "all", "2025-11", "gross_margin", spread(40, 0.2, 0.6));
    await lk.publish("fintech", "all", "2025-12", "gross_margin", spread(40, 0.3, 0.7));
    const p = await lk.data(live, "/benchmarks/percentile?category=fintech&metric=gross_margin&value=0.4");
    expect([p.status, p.body.period]).toEqual([200, "2025-12"]);
    for (const path of ["/benchmarks/distribution?category=fintech&metric=gross_margin", "/segments?category=fintech", "/segments/breakdown?category=fintech&metric=gross_margin"]) {
      const r = await lk.data(live, path);
      expect([r.status, r.body.period], path).toEqual([200, "2025-12"]);
    }
    // The spec fixes /benchmarks' default as the latest quarter: still a 404, but one that does not claim there is no data.
    const b = await lk.data(live, "/benchmarks?category=fintech");
    expect([b.status, b.body.code]).toEqual([404, "data.not_found"]);
    expect(b.body.detail).toBe("No quarterly benchmark data for fintech (all segments). It has monthly data (the latest: 2025-12); ask with `period=2025-12`.");
    expect((await lk.data(live, "/benchmarks?category=fintech&period=2025-12")).body).toMatchObject({ period: "2025-12", sample_size: 40 });
    const h = await lk.data(live, "/benchmarks/history?category=fintech&metric=gross_margin");
    expect([h.status, h.body.detail]).toEqual([404, "No quarterly benchmark data for fintech (all segments). It has monthly data (the latest: 2025-12); ask with `granularity=monthly`."]);
    // A period asked for without data names the latest one that has some.
    const q = await lk.data(live, "/benchmarks/percentile?category=fintech&metric=gross_margin&value=0.4&period=2025-Q4");
    expect([q.status, q.body.detail]).toEqual([404, "No benchmark data for fintech (all segments) in 2025-Q4. The latest period with data is 2025-12."]);
  });

  it("default period: the one ending last; a quarter and the month it ends with end together, and the quarter wins", async () => {
    const { lk, live } = await liveKit();
    await lk.publish("fintech", "all", "2025-Q4", "gross_margin", spread(40, 0.2, 0.6));
    await lk.publish("fintech", "all", "2025-12", "gross_margin", spread(40, 0.3, 0.7));
    expect((await lk.data(live, "/benchmarks/percentile?category=fintech&metric=gross_margin&value=0.4")).body.period).toBe("2025-Q4");
    await lk.publish("fintech", "all", "2026-01", "gross_margin", spread(40, 0.3, 0.7));
    expect((await lk.data(live, "/benchmarks/percentile?category=fintech&metric=gross_margin&value=0.4")).body.period).toBe("2026-01");
    expect((await lk.data(live, "/benchmarks/distribution?category=fintech&metric=gross_margin")).body.period).toBe("2026-01");
    // /benchmarks keeps the spec's latest quarter.
    expect((await lk.data(live, "/benchmarks?category=fintech")).body.period).toBe("2025-Q4");
  });

  it("history leaves out periods below the minimum", async () => {
    const { lk, live } = await liveKit();
    await lk.publish("saas", "all", "2026-Q1", "churn_rate", spread(30, 0, 0.1));
    await lk.publish("saas", "all", "2026-Q2", "churn_rate", spread(5, 0, 0.1));
    await lk.publish("saas", "all", "2026-Q3", "churn_rate", spread(31, 0, 0.1));
    const r = await lk.data(live, "/benchmarks/history?category=saas&metric=churn_rate");
    expect(r.body.history.map((h: { period: string }) => h.period)).toEqual(["2026-Q1", "2026-Q3"]);
  });
});

describe("GET /data/v1/segments", () => {
  it("lists the category's segments with data in the latest quarter, each with its largest metric sample", async () => {
    const r = await get("/segments?category=saas");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["category", "period", "segments"]);
    expect(r.body).toMatchObject({ category: "saas", period: SYNTHETIC_LATEST_QUARTER });
    const names = await synthetic.segments("saas");
    expect(r.body.segments.map((s: { segment: string }) => s.segment)).toEqual(names);
    for (const s of r.body.segments) {
      const cells = await synthetic.cells("saas", s.segment, SYNTHETIC_LATEST_QUARTER, metricsOf("saas"));
      expect(s).toEqual({ segment: s.segment, sample_size: Math.max(...[...cells.values()].map((c) => c.sampleSize)), published: true, withheld_reason: null });
    }
  });

  it("takes a period; bad or missing category → 422", async () => {
    expect((await get("/segments?category=retail&period=2025-07")).body.period).toBe("2025-07");
    expect((await get("/segments")).body.code).toBe("validation.missing_parameter");
    expect((await get("/segments?category=crypto")).body.code).toBe("validation.invalid_category");
    expect((await get("/segments?category=saas&period=2026-Q5")).body.code).toBe("validation.invalid_parameter");
  });

  it("live keys see the imported segments only; a segment below the minimum is listed, not published, without its size; no data → 404", async () => {
    const lk = kit();
    const { session } = await lk.account();
    const live = (await lk.key(session, "live", ["segments:read"])).raw;
    expect((await lk.data(live, "/segments?category=retail")).body.code).toBe("data.not_found");
    await lk.publish("retail", "all", "2026-Q2", "refund_rate", spread(45, 0, 0.2));
    await lk.publish("retail", "omnichannel", "2026-Q2", "refund_rate", spread(33, 0, 0.2));
    await lk.publish("retail", "omnichannel", "2026-Q2", "gross_margin", spread(35, 0.2, 0.6));
    await lk.publish("retail", "single_store", "2026-Q2", "refund_rate", spread(12, 0, 0.2));
    // A segment with data in another period only is not listed for this one.
    await lk.publish("retail", "multi_location", "2026-Q1", "refund_rate", spread(40, 0, 0.2));
    const r = await lk.data(live, "/segments?category=retail");
    expect(r.body).toEqual({
      category: "retail",
      period: "2026-Q2",
      segments: [
        // refund_rate: all 45 = omnichannel 33 + single_store 12, so omnichannel's refund_rate is withheld too
        // (complementary); its gross_margin (35, no smaller segment beside it) is published.
        { segment: "omnichannel", sample_size: 35, published: true, withheld_reason: null },
        { segment: "single_store", sample_size: null, published: false, withheld_reason: "below_minimum" },
      ],
    });
  });
});

describe("GET /data/v1/segments/breakdown", () => {
  it("gives `all` first, then every segment, each with the percentile set /benchmarks publishes for it", async () => {
    const r = await get("/segments/breakdown?category=saas&metric=churn_rate");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ category: "saas", metric: "churn_rate", period: SYNTHETIC_LATEST_QUARTER });
    expect(r.body.segments.map((s: { segment: string }) => s.segment)).toEqual(["all", ...(await synthetic.segments("saas"))]);
    for (const s of r.body.segments) {
      const bench = await get(`/benchmarks?category=saas${s.segment === "all" ? "" : `&segment=${s.segment}`}`);
      expect(s).toEqual({ segment: s.segment, sample_size: (await syntheticCell("saas", "churn_rate", SYNTHETIC_LATEST_QUARTER, s.segment)).sampleSize, withheld: false, withheld_reason: null, percentiles: bench.body.metrics.churn_rate });
    }
  });

  it("takes a period; the metric must be offered by the category", async () => {
    expect((await get("/segments/breakdown?category=saas&metric=gross_margin&period=2024-Q1")).body.period).toBe("2024-Q1");
    expect((await get("/segments/breakdown?category=ecommerce&metric=churn_rate")).body.code).toBe("validation.metric_not_offered");
    expect((await get("/segments/breakdown?category=saas")).body.code).toBe("validation.missing_parameter");
    expect((await get("/segments/breakdown?category=saas&metric=nps")).body.code).toBe("validation.invalid_metric");
  });

  it("the publication minimum applies per segment: a small segment is withheld, its figures never leaked", async () => {
    const lk = kit();
    const { session } = await lk.account();
    const live = (await lk.key(session, "live", ["segments:read"])).raw;
    await lk.publish("saas", "all", "2026-Q3", "churn_rate", spread(110, 0, 0.1));
    await lk.publish("saas", "enterprise", "2026-Q3", "churn_rate", spread(60, 0, 0.05));
    await lk.publish("saas", "mid_market", "2026-Q3", "churn_rate", spread(30, 0, 0.05));
    await lk.publish("saas", "smb", "2026-Q3", "churn_rate", spread(20, 0.07, 0.1));
    const r = await lk.data(live, "/segments/breakdown?category=saas&metric=churn_rate");
    expect(r.status).toBe(200);
    // smb (20) alone would be all − enterprise − mid_market: one of those is withheld too (complementary), the
    // first by name; with enterprise (at least 30) withheld, smb may hold anything from 1 to 110 − 30 − 30 = 50.
    expect(r.body.segments.map((s: { segment: string; withheld: boolean }) => [s.segment, s.withheld])).toEqual([["all", false], ["enterprise", true], ["mid_market", false], ["smb", true]]);
    expect(r.body.segments[3]).toEqual({ segment: "smb", sample_size: null, withheld: true, withheld_reason: "below_minimum", percentiles: null });
    expect(r.body.segments[1]).toEqual({ segment: "enterprise", sample_size: null, withheld: true, withheld_reason: "complementary", percentiles: null });
    expect(r.body.segments[2].percentiles).toMatchObject({ p50: 0.025, mean: 0.025 });
    // Nothing of smb's sample appears anywhere in the body.
    expect(JSON.stringify(r.body)).not.toContain("0.085");
  });

  it("nothing published → 404 data.insufficient_sample; no data → 404 data.not_found", async () => {
    const lk = kit();
    const { session } = await lk.account();
    const live = (await lk.key(session, "live", ["segments:read"])).raw;
    expect((await lk.data(live, "/segments/breakdown?category=saas&metric=churn_rate")).body.code).toBe("data.not_found");
    await lk.publish("saas", "all", "2026-Q3", "churn_rate", spread(20, 0, 0.1));
    await lk.publish("saas", "smb", "2026-Q3", "churn_rate", spread(10, 0, 0.1));
    expect((await lk.data(live, "/segments/breakdown?category=saas&metric=churn_rate")).body.code).toBe("data.insufficient_sample");
    expect((await lk.data(live, "/segments/breakdown?category=saas&metric=gross_margin")).body.code).toBe("data.not_found");
  });
});
