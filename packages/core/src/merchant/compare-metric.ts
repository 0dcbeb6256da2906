/** How one metric of a merchant compares with its benchmark cell: rank, direction-aware standing, quartiles. */
import type { Metric, MetricDirection } from "../data/catalog.ts";
import { METRIC_INFO } from "../data/catalog.ts";
import { percentileRank } from "../stats/percentile-rank.ts";
import { quantileSorted } from "../stats/quantile-sorted.ts";
import { roundTo1 } from "../stats/round-to1.ts";
import type { SortedSample } from "../stats/sorted-sample.ts";

/** The peers a value is ranked among: one published cell and the period it belongs to. */
export interface BenchmarkCell {
  /** One value per business, ascending. */
  readonly sorted: SortedSample;
  /** Distinct businesses in the cell. */
  readonly sampleSize: number;
  readonly period: string;
}

/** One metric of a merchant against its cell. */
export interface MetricComparison {
  readonly metric: Metric;
  readonly value: number;
  readonly direction: MetricDirection;
  /** Percentile rank of the value in the cell (scipy's "mean" kind), 0–100, one decimal. */
  readonly percentile: number;
  /** The share of peers the value is better than in the metric's good direction, 0–100, one decimal. */
  readonly betterThanPct: number;
  /** The cell's quartiles (type 7), unrounded. */
  readonly p25: number;
  readonly p50: number;
  readonly p75: number;
  readonly sampleSize: number;
  /** The cell's period. */
  readonly benchmarkPeriod: string;
}

/**
 * The standing of a rank in the metric's good direction: the rank itself when higher is better, `100 − rank`
 * when lower is better (computed in tenths, so a one-decimal rank gives a one-decimal standing exactly).
 */
export function betterThanPct(direction: MetricDirection, percentile: number): number {
  return direction === "higher_is_better" ? percentile : (1000 - Math.round(percentile * 10)) / 10;
}

/**
 * Ranks `value` of `metric` among the cell's businesses. `rank` (unrounded, 0–100) is the rank to publish when
 * the caller has one (the HTTP layer passes the privacy-safe rank, docs/privacy.md); else scipy's exact rank.
 */
export function compareMetric(metric: Metric, value: number, cell: BenchmarkCell, rank?: number): MetricComparison {
  const direction = METRIC_INFO[metric].direction;
  const percentile = roundTo1(rank ?? percentileRank(cell.sorted, value));
  return {
    metric,
    value,
    direction,
    percentile,
    betterThanPct: betterThanPct(direction, percentile),
    p25: quantileSorted(cell.sorted, 0.25),
    p50: quantileSorted(cell.sorted, 0.5),
    p75: quantileSorted(cell.sorted, 0.75),
    sampleSize: cell.sampleSize,
    benchmarkPeriod: cell.period,
  };
}
