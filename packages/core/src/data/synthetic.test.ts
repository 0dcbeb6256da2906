import { describe, expect, it } from "vitest";
import { CATEGORIES, METRICS, METRIC_INFO, metricsOf } from "./catalog.ts";
import type { Category, Metric } from "./catalog.ts";
import type { Granularity } from "./period.ts";
import { distinctBusinesses } from "./distinct-businesses.ts";
import type { BenchmarkSource } from "./source.ts";
import { ALL_SEGMENTS } from "./source.ts";
import { SYNTHETIC_LATEST_QUARTER, SYNTHETIC_SEGMENTS, createSyntheticSource } from "./synthetic.ts";

const GRANULARITIES: readonly Granularity[] = ["quarterly", "monthly"];

async function values(src: BenchmarkSource, c: Category, segment: string, period: string, m: Metric): Promise<Float64Array> {
  const cell = (await src.cells(c, segment, period, [m])).get(m);
  if (!cell) throw new Error(`no cell ${c}/${segment}/${period}/${m}`);
  return cell.sorted;
}

function median(sorted: Float64Array): number {
  const n = sorted.length;
  return n % 2 ? (sorted[(n - 1) / 2] as number) : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2;
}

describe("createSyntheticSource: determinism", () => {
  it("same seed → identical numbers, whatever the query order and cache size", async () => {
    const a = createSyntheticSource("seed-a");
    const b = createSyntheticSource("seed-a", { cacheSize: 1 });
    const first = await values(a, "saas", "all", "2026-Q3", "gross_margin");
    // b generates a pile of other cells first, evicting everything, then regenerates the same one.
    for (const c of CATEGORIES) await b.cells(c, "all", "2024-Q1", metricsOf(c));
    await b.cells("saas", "smb", "2026-Q3", ["churn_rate"]);
    expect(await values(b, "saas", "all", "2026-Q3", "gross_margin")).toEqual(first);
    expect(await values(b, "marketplace", "b2b", "2025-07", "take_rate")).toEqual(
      await values(a, "marketplace", "b2b", "2025-07", "take_rate"),
    );
  });

  it("keeps the cell sets used most recently when it must evict one", async () => {
    const s = createSyntheticSource("seed-a", { cacheSize: 2 });
    const segment = SYNTHETIC_SEGMENTS.saas[0] as string;
    const cell = async (period: string) => (await s.cells("saas", segment, period, ["gross_margin"])).get("gross_margin");
    const a = await cell("2026-Q3");
    const b = await cell("2026-Q2");
    expect(await cell("2026-Q3")).toBe(a); // a hit: now the most recent
    await cell("2026-Q1"); // evicts 2026-Q2, used longest ago
    expect(await cell("2026-Q3")).toBe(a);
    const b2 = await cell("2026-Q2"); // generated again (same numbers, new object), evicting 2026-Q1
    expect(b2).not.toBe(b);
    expect(b2?.sorted).toEqual(b?.sorted);
    expect(await cell("2026-Q3")).toBe(a);
  });

  it("different seed → different numbers", async () => {
    const a = await values(createSyntheticSource("seed-a"), "saas", "all", "2026-Q3", "gross_margin");
    const b = await values(createSyntheticSource("seed-b"), "saas", "all", "2026-Q3", "gross_margin");
    expect(b).not.toEqual(a);
  });

  it("does not depend on the wall clock: the latest periods are fixed constants", async () => {
    const src = createSyntheticSource("clock");
    expect(SYNTHETIC_LATEST_QUARTER).toBe("2026-Q3");
    expect(await src.latestPeriod("retail", "all", "quarterly")).toBe("2026-Q3");
    expect(await src.latestPeriod("retail", "all", "monthly")).toBe("2026-09");
    const moved = createSyntheticSource("clock", { latestQuarter: "2025-Q1" });
    expect(await moved.latestPeriod("retail", "all", "monthly")).toBe("2025-03");
  });
});

describe("createSyntheticSource: coverage", () => {
  const src = createSyntheticSource("coverage");

  it("every category has exactly its metrics from the spec's table", async () => {
    for (const c of CATEGORIES) {
      const expected = METRICS.filter((m) => METRIC_INFO[m].categories.includes(c));
      for (const segment of ["all", ...SYNTHETIC_SEGMENTS[c]]) {
        const cells = await src.cells(c, segment, "2026-Q3", METRICS);
        expect([...cells.keys()].sort(), `${c}/${segment}`).toEqual([...expected].sort());
      }
    }
  });

  it("has 3–4 snake_case segments per category, and `segments` leaves `all` out", async () => {
    for (const c of CATEGORIES) {
      const segments = await src.segments(c);
      expect(segments.length).toBeGreaterThanOrEqual(3);
      expect(segments.length).toBeLessThanOrEqual(4);
      for (const s of segments) expect(s).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      expect(segments).not.toContain("all");
    }
  });

  it("offers at least 20 quarters and 24 months, ascending and ending at the latest", async () => {
    const quarters = await src.recentPeriods("saas", "all", "churn_rate", "quarterly", 1000);
    const months = await src.recentPeriods("saas", "enterprise", "churn_rate", "monthly", 1000);
    expect(quarters.length).toBeGreaterThanOrEqual(20);
    expect(months.length).toBeGreaterThanOrEqual(24);
    for (const list of [quarters, months]) expect([...list].sort()).toEqual(list);
    expect(quarters.at(-1)).toBe("2026-Q3");
    expect(months.at(-1)).toBe("2026-09");
    expect(quarters.slice(0, 3)).toEqual(["2020-Q4", "2021-Q1", "2021-Q2"]);
    expect(await src.recentPeriods("saas", "all", "churn_rate", "quarterly", 4)).toEqual(["2025-Q4", "2026-Q1", "2026-Q2", "2026-Q3"]);
    expect(await src.recentPeriods("saas", "all", "churn_rate", "monthly", 2)).toEqual(["2026-08", "2026-09"]);
  });

  it("has ≥ 300 businesses in every `all` cell, the sum of its segments' businesses", async () => {
    for (const c of CATEGORIES) {
      const m = metricsOf(c)[0] as Metric;
      for (const g of GRANULARITIES) {
        for (const p of await src.recentPeriods(c, "all", m, g, 1000)) {
          const all = (await src.cells(c, "all", p, metricsOf(c))).get(m);
          expect(all?.sampleSize).toBeGreaterThanOrEqual(300);
          expect(all?.sorted.length).toBe(all?.sampleSize);
          let sum = 0;
          for (const s of SYNTHETIC_SEGMENTS[c]) sum += (await src.cells(c, s, p, [m])).get(m)?.sampleSize ?? 0;
          expect(sum).toBe(all?.sampleSize);
        }
      }
    }
  });

  it("cells are sorted, finite, and ratios are fractions", async () => {
    for (const c of CATEGORIES) {
      for (const [m, cell] of await src.cells(c, "all", "2025-Q2", metricsOf(c))) {
        const v = cell.sorted;
        for (let i = 0; i < v.length; i++) {
          expect(Number.isFinite(v[i])).toBe(true);
          if (i > 0) expect(v[i]).toBeGreaterThanOrEqual(v[i - 1] as number);
        }
        const info = METRIC_INFO[m];
        if (info.unit === "money" || info.unit === "multiple") expect(v[0]).toBeGreaterThan(0);
        if (info.unit === "ratio" && !m.endsWith("_growth") && m !== "net_revenue_retention") {
          expect(v[0]).toBeGreaterThanOrEqual(0);
          expect(v[v.length - 1]).toBeLessThan(1);
        }
      }
    }
  });
});

describe("createSyntheticSource: business identities", () => {
  it("numbers businesses once per (category, period), as an import does: segments never share an ordinal, and all holds exactly theirs", async () => {
    const source = createSyntheticSource("ordinals");
    for (const category of CATEGORIES) {
      const m = metricsOf(category)[0] as Metric;
      const all = (await source.cells(category, ALL_SEGMENTS, SYNTHETIC_LATEST_QUARTER, [m])).get(m)!;
      const segments = await Promise.all(SYNTHETIC_SEGMENTS[category].map(async (s) => (await source.cells(category, s, SYNTHETIC_LATEST_QUARTER, [m])).get(m)!));
      const total = segments.reduce((t, c) => t + c.sampleSize, 0);
      expect(distinctBusinesses(segments), category).toBe(total);
      expect(distinctBusinesses([all, ...segments]), category).toBe(all.sampleSize);
      expect(all.sampleSize, category).toBe(total);
    }
  });
});

describe("createSyntheticSource: realistic shapes", () => {
  const ranges: [Category, Metric, number, number][] = [
    ["saas", "gross_margin", 0.68, 0.78],
    ["saas", "churn_rate", 0.03, 0.07],
    ["saas", "net_revenue_retention", 0.97, 1.07],
    ["saas", "ltv_cac_ratio", 2.4, 3.6],
    ["saas", "burn_multiple", 1.4, 2.2],
    ["ecommerce", "cart_abandon_rate", 0.65, 0.75],
    ["marketplace", "take_rate", 0.1, 0.25],
  ];

  for (const seed of ["test", "another-seed", "svc_test"]) {
    it(`medians of the latest quarter and month land where benchmarks put them (seed ${seed})`, async () => {
      const src = createSyntheticSource(seed);
      for (const [c, m, lo, hi] of ranges) {
        for (const p of ["2026-Q3", "2026-09"]) {
          const p50 = median(await values(src, c, "all", p, m));
          expect(p50, `${c} ${m} ${p}`).toBeGreaterThanOrEqual(lo);
          expect(p50, `${c} ${m} ${p}`).toBeLessThanOrEqual(hi);
        }
      }
    });
  }

  it("every quarter of history stays in those ranges, yet history is not flat", async () => {
    const src = createSyntheticSource("history");
    for (const [c, m, lo, hi] of ranges) {
      const medians: number[] = [];
      for (const p of await src.recentPeriods(c, "all", m, "quarterly", 20)) medians.push(median(await values(src, c, "all", p, m)));
      expect(Math.min(...medians), `${c} ${m}`).toBeGreaterThanOrEqual(lo);
      expect(Math.max(...medians), `${c} ${m}`).toBeLessThanOrEqual(hi);
      expect(new Set(medians).size).toBeGreaterThan(10);
    }
  });

  it("revenue growth (every category) and GMV growth can be negative", async () => {
    const src = createSyntheticSource("growth");
    for (const c of CATEGORIES) expect((await values(src, c, "all", "2026-Q3", "revenue_growth"))[0]).toBeLessThan(0);
    expect((await values(src, "marketplace", "all", "2026-Q3", "gmv_growth"))[0]).toBeLessThan(0);
  });

  it("segments differ: enterprise SaaS churns less and has a larger LTV than SMB", async () => {
    const src = createSyntheticSource("segments");
    expect(median(await values(src, "saas", "enterprise", "2026-Q3", "churn_rate"))).toBeLessThan(
      median(await values(src, "saas", "smb", "2026-Q3", "churn_rate")),
    );
    expect(median(await values(src, "saas", "enterprise", "2026-Q3", "customer_ltv"))).toBeGreaterThan(
      3 * median(await values(src, "saas", "smb", "2026-Q3", "customer_ltv")),
    );
  });
});

describe("createSyntheticSource: unknowns", () => {
  const src = createSyntheticSource("unknowns");

  it("an unknown segment has no latest period, no history and no cells", async () => {
    expect(await src.latestPeriod("saas", "dtc", "quarterly")).toBeNull();
    expect(await src.recentPeriods("saas", "nope", "churn_rate", "quarterly", 4)).toEqual([]);
    expect((await src.cells("saas", "nope", "2026-Q3", ["churn_rate"])).size).toBe(0);
  });

  it("a period outside the dataset, or a metric the category lacks, gives nothing", async () => {
    expect((await src.cells("saas", "all", "2030-Q1", ["churn_rate"])).size).toBe(0);
    expect((await src.cells("saas", "all", "2026-10", ["churn_rate"])).size).toBe(0);
    expect((await src.cells("saas", "all", "2026-Q3", ["take_rate"])).size).toBe(0);
    expect(await src.recentPeriods("retail", "all", "churn_rate", "quarterly", 4)).toEqual([]);
    expect(await src.recentPeriods("retail", "all", "gross_margin", "quarterly", 0)).toEqual([]);
    expect(await src.segments("nope" as Category)).toEqual([]);
  });
});
