import { describe, expect, it } from "vitest";
import { periodDates, parsePeriod } from "../data/period.ts";
import { formatMetricValue } from "../data/format-metric-value.ts";
import type { MetricComparison } from "./compare-metric.ts";
import { betterThanPct, compareMetric } from "./compare-metric.ts";
import { isMerchantId } from "./merchant-id.ts";
import { merchantInsights } from "./merchant-insights.ts";
import { gradeOf, merchantScore } from "./merchant-score.ts";
import { latestSnapshot, previousSnapshot } from "./snapshot-order.ts";

/** 1, 2, …, n: the rank of k among them is easy to say. */
const oneTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
const cellOf = (values: number[], period = "2026-Q2") => ({ sorted: Float64Array.from(values).sort(), sampleSize: values.length, period });

describe("compareMetric", () => {
  it("a value equal to the cell's median ranks at 50; quartiles are type 7", () => {
    const c = compareMetric("gross_margin", 50, cellOf(oneTo(99)));
    expect(c).toEqual({ metric: "gross_margin", value: 50, direction: "higher_is_better", percentile: 50, betterThanPct: 50, p25: 25.5, p50: 50, p75: 74.5, sampleSize: 99, benchmarkPeriod: "2026-Q2" });
  });

  it("the rank is scipy's mean kind, one decimal; lower-is-better metrics beat 100 − rank of their peers", () => {
    // Among 1..10, a value of 3 has 2 below and 3 at or below: (2 + 3) / 2 / 10 = 25%.
    const churn = compareMetric("churn_rate", 3, cellOf(oneTo(10)));
    expect([churn.percentile, churn.betterThanPct, churn.direction]).toEqual([25, 75, "lower_is_better"]);
    const margin = compareMetric("gross_margin", 3, cellOf(oneTo(10)));
    expect([margin.percentile, margin.betterThanPct]).toEqual([25, 25]);
    // Beyond either end.
    expect(compareMetric("churn_rate", 0, cellOf(oneTo(10))).betterThanPct).toBe(100);
    expect(compareMetric("gross_margin", 11, cellOf(oneTo(10))).betterThanPct).toBe(100);
    // 1/3 of 100 → 33.3, so lower-is-better gives exactly 66.7 (no 66.69999…).
    expect(compareMetric("refund_rate", 2, cellOf([1, 2, 3])).percentile).toBe(50);
    expect(betterThanPct("lower_is_better", 33.3)).toBe(66.7);
    expect(betterThanPct("higher_is_better", 33.3)).toBe(33.3);
  });
});

function comparison(metric: MetricComparison["metric"], value: number, values: number[], period = "2026-Q2"): MetricComparison {
  return compareMetric(metric, value, cellOf(values, period));
}

describe("merchantInsights", () => {
  const cell = oneTo(100);
  const current = { period: "2026-Q2", metrics: { gross_margin: 95, churn_rate: 90, revenue_growth: 50, burn_multiple: 5, customer_acquisition_cost: 10 } };
  const ranked = [
    comparison("gross_margin", 95, cell), // better than 94.5%: strength
    comparison("revenue_growth", 50, cell), // 49.5%: neither
    comparison("churn_rate", 90, cell), // lower is better: better than 10.5%: weakness
    comparison("customer_acquisition_cost", 10, cell), // lower is better: better than 90.5%: strength
    comparison("burn_multiple", 76, cell), // lower is better: 24.5%: weakness
  ];

  it("strengths are the top quartile and weaknesses the bottom one, in the metric's good direction", () => {
    const findings = merchantInsights(ranked, current, null, "saas (all segments)");
    expect(findings.map((f) => [f.kind, f.metric])).toEqual([
      ["strength", "gross_margin"],
      ["strength", "customer_acquisition_cost"],
      ["weakness", "churn_rate"],
      ["weakness", "burn_multiple"],
    ]);
    const churn = findings.find((f) => f.metric === "churn_rate")!;
    expect(churn.message).toBe("Churn rate of 9000% is in the bottom quartile of saas (all segments) in 2026-Q2: better than only 10.5% of peers (lower is better for this metric).");
    expect(churn.evidence).toEqual({ value: 90, percentile: 89.5, better_than_pct: 10.5, p25: 25.75, p50: 50.5, p75: 75.25, sample_size: 100, benchmark_period: "2026-Q2" });
  });

  it("the quartile edges are inclusive: better than exactly 75% is a strength, exactly 25% a weakness", () => {
    // Among 1..4, a value of 3.5 has 3 below and 3 at or below: 75%; 1.5 gives 25%.
    const four = oneTo(4);
    const f = merchantInsights([comparison("gross_margin", 3.5, four), comparison("take_rate", 1.5, four), comparison("gmv_growth", 2.5, four)], { period: "2026-Q2", metrics: {} }, null, "x");
    expect(f.map((x) => [x.kind, x.metric])).toEqual([["strength", "gross_margin"], ["weakness", "take_rate"]]);
  });

  it("trends compare with the previous snapshot by direction: a rising churn rate worsens, a rising margin improves; no change, no finding", () => {
    const previous = { period: "2026-Q1", metrics: { gross_margin: 0.6, churn_rate: 0.03, revenue_growth: 0.05, customer_ltv: 900 } };
    const now = { period: "2026-Q2", metrics: { gross_margin: 0.65, churn_rate: 0.04, revenue_growth: 0.05, customer_ltv: 800, take_rate: 0.1 } };
    const findings = merchantInsights([], now, previous, "saas (all segments)");
    expect(findings.map((f) => [f.kind, f.metric])).toEqual([
      ["improving", "gross_margin"],
      ["worsening", "customer_ltv"],
      ["worsening", "churn_rate"],
    ]);
    const churn = findings.find((f) => f.metric === "churn_rate")!;
    expect(churn.message).toBe("Churn rate rose from 3% in 2026-Q1 to 4% in 2026-Q2: a deterioration, as lower is better for this metric.");
    expect(churn.evidence).toMatchObject({ value: 0.04, period: "2026-Q2", previous_value: 0.03, previous_period: "2026-Q1", change_pct: 33.3 });
    expect((churn.evidence as { change: number }).change).toBeCloseTo(0.01, 12);
    const fallingCost = merchantInsights([], { period: "2026-Q2", metrics: { customer_acquisition_cost: 90 } }, { period: "2026-Q1", metrics: { customer_acquisition_cost: 100 } }, "x");
    expect(fallingCost.map((f) => f.kind)).toEqual(["improving"]);
    expect(fallingCost[0]!.evidence).toMatchObject({ change: -10, change_pct: -10 });
    expect(merchantInsights([], { period: "2026-Q2", metrics: { revenue_growth: 0.1 } }, { period: "2026-Q1", metrics: { revenue_growth: 0 } }, "x")[0]!.evidence).toMatchObject({ change_pct: null });
  });
});

describe("merchantScore", () => {
  it("is the mean of the direction-adjusted ranks, one decimal, with equal weights whose contributions sum to it", () => {
    const cell = oneTo(100);
    const ranked = [comparison("gross_margin", 95, cell), comparison("churn_rate", 90, cell), comparison("revenue_growth", 60, cell)];
    // Standings 94.5, 10.5 and 59.5: mean 54.8333…
    const s = merchantScore(ranked)!;
    expect(s.score).toBe(54.8);
    expect(s.grade).toBe("C");
    expect(s.components.map((c) => [c.metric, c.rank])).toEqual([["gross_margin", 94.5], ["churn_rate", 10.5], ["revenue_growth", 59.5]]);
    for (const c of s.components) expect(c.weight).toBeCloseTo(1 / 3, 12);
    expect(s.components.reduce((sum, c) => sum + c.contribution, 0)).toBeCloseTo(54.8333333, 6);
  });

  it("a single metric at the median scores 50; nothing ranked gives null", () => {
    expect(merchantScore([comparison("gross_margin", 50, oneTo(99))])).toEqual({ score: 50, grade: "C", components: [{ metric: "gross_margin", rank: 50, weight: 1, contribution: 50 }] });
    expect(merchantScore([])).toBeNull();
  });

  it("grades: A from 80, B from 60, C from 40, D from 20, F below", () => {
    expect([100, 80, 79.9, 60, 59.9, 40, 39.9, 20, 19.9, 0].map(gradeOf)).toEqual(["A", "A", "B", "B", "C", "C", "D", "D", "F", "F"]);
  });
});

describe("which snapshots an analysis uses", () => {
  const at = (period: string, createdAt = 0) => ({ period, createdAt });

  it("latest: the period that ends last, whatever the upload order; a quarter and its last month tie on the newer upload", () => {
    expect(latestSnapshot([at("2026-Q1", 5), at("2026-Q3", 1), at("2025-Q4", 9)])!.period).toBe("2026-Q3");
    expect(latestSnapshot([at("2026-Q2"), at("2026-08")])!.period).toBe("2026-08");
    expect(latestSnapshot([at("2026-Q3", 1), at("2026-09", 2)])!.period).toBe("2026-09");
    expect(latestSnapshot([at("2026-Q3", 3), at("2026-09", 2)])!.period).toBe("2026-Q3");
    expect(latestSnapshot([])).toBeNull();
  });

  it("previous: the latest earlier period of the same granularity", () => {
    const all = [at("2025-Q4"), at("2026-Q2"), at("2026-05"), at("2026-Q1"), at("2026-Q3")];
    expect(previousSnapshot(all, at("2026-Q3"))!.period).toBe("2026-Q2");
    expect(previousSnapshot(all, at("2026-Q1"))!.period).toBe("2025-Q4");
    expect(previousSnapshot(all, at("2025-Q4"))).toBeNull();
    expect(previousSnapshot(all, at("2026-06"))!.period).toBe("2026-05");
    expect(previousSnapshot(all, at("2026-05"))).toBeNull();
  });
});

describe("periods and identifiers", () => {
  it("periodDates gives the first and last day, leap years included", () => {
    expect(periodDates(parsePeriod("2026-Q3")!)).toEqual({ start: "2026-07-01", end: "2026-09-30" });
    expect(periodDates(parsePeriod("2026-Q4")!)).toEqual({ start: "2026-10-01", end: "2026-12-31" });
    expect(periodDates(parsePeriod("2024-Q1")!)).toEqual({ start: "2024-01-01", end: "2024-03-31" });
    expect(periodDates(parsePeriod("2024-02")!)).toEqual({ start: "2024-02-01", end: "2024-02-29" });
    expect(periodDates(parsePeriod("2100-02")!)).toEqual({ start: "2100-02-01", end: "2100-02-28" });
    expect(periodDates(parsePeriod("2000-02")!)).toEqual({ start: "2000-02-01", end: "2000-02-29" });
    expect(periodDates(parsePeriod("2026-11")!)).toEqual({ start: "2026-11-01", end: "2026-11-30" });
  });

  it("merchant ids: 1–128 characters, no control characters, no white space at the ends", () => {
    for (const ok of ["m", "merchant-42", "Café & Co <3", "x".repeat(128), "a b", "商户-1", "😀"]) expect(isMerchantId(ok), ok).toBe(true);
    for (const bad of ["", " m", "m ", "x".repeat(129), "a\u0000b", "a\nb", "a\u0085b", "a\uD800b", "\uFFFF"]) expect(isMerchantId(bad), JSON.stringify(bad)).toBe(false);
  });

  it("formatMetricValue: ratios as percent, multiples with x, money plain", () => {
    expect([formatMetricValue("gross_margin", 0.4412), formatMetricValue("ltv_cac_ratio", 3.14159), formatMetricValue("customer_ltv", 1234.5)]).toEqual(["44.12%", "3.14x", "1234.5"]);
  });
});
