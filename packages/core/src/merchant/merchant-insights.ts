/** Findings about a merchant: strengths and weaknesses from its ranks, trends from its previous snapshot. */
import type { Metric } from "../data/catalog.ts";
import { METRIC_INFO, METRICS } from "../data/catalog.ts";
import { formatMetricValue, metricNoun } from "../data/format-metric-value.ts";
import { roundTo1 } from "../stats/round-to1.ts";
import type { MetricComparison } from "./compare-metric.ts";

/** A strength (top quartile), a weakness (bottom quartile), or a move since the previous snapshot. */
export type FindingKind = "strength" | "weakness" | "improving" | "worsening";

/** The figures behind a rank finding, as the API shows them. */
export interface RankEvidence {
  readonly value: number;
  readonly percentile: number;
  readonly better_than_pct: number;
  readonly p25: number;
  readonly p50: number;
  readonly p75: number;
  readonly sample_size: number;
  readonly benchmark_period: string;
}

/** The figures behind a trend finding, as the API shows them. */
export interface TrendEvidence {
  readonly value: number;
  readonly period: string;
  readonly previous_value: number;
  readonly previous_period: string;
  readonly change: number;
  /** The change relative to the previous value's magnitude, in percent (one decimal); null when that was 0. */
  readonly change_pct: number | null;
}

/** One finding: what kind, about which metric, a sentence, and the figures behind it. */
export interface Finding {
  readonly kind: FindingKind;
  readonly metric: Metric;
  readonly message: string;
  readonly evidence: RankEvidence | TrendEvidence;
}

/** A snapshot as insights need it. */
export interface PeriodValues {
  readonly period: string;
  readonly metrics: Readonly<Partial<Record<Metric, number>>>;
}

/** A strength is better than at least this share of peers (the top quartile)… */
export const STRENGTH_AT = 75;
/** …and a weakness better than at most this share (the bottom quartile). */
export const WEAKNESS_AT = 25;

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function rankFinding(kind: "strength" | "weakness", c: MetricComparison, where: string): Finding {
  const lower = c.direction === "lower_is_better";
  const head = `${capitalized(metricNoun(c.metric))} of ${formatMetricValue(c.metric, c.value)} is in the ${kind === "strength" ? "top" : "bottom"} quartile of ${where} in ${c.benchmarkPeriod}`;
  const share = `better than ${kind === "weakness" ? "only " : ""}${c.betterThanPct.toFixed(1)}% of peers`;
  const note = lower ? " (lower is better for this metric)" : "";
  return {
    kind,
    metric: c.metric,
    message: `${head}: ${share}${note}.`,
    evidence: {
      value: c.value,
      percentile: c.percentile,
      better_than_pct: c.betterThanPct,
      p25: c.p25,
      p50: c.p50,
      p75: c.p75,
      sample_size: c.sampleSize,
      benchmark_period: c.benchmarkPeriod,
    },
  };
}

function trendFinding(metric: Metric, current: PeriodValues, previous: PeriodValues, now: number, before: number): Finding | null {
  const change = now - before;
  if (change === 0) return null;
  const lower = METRIC_INFO[metric].direction === "lower_is_better";
  const improving = lower ? change < 0 : change > 0;
  const kind = improving ? "improving" : "worsening";
  const verb = change > 0 ? "rose" : "fell";
  const message =
    `${capitalized(metricNoun(metric))} ${verb} from ${formatMetricValue(metric, before)} in ${previous.period} to ${formatMetricValue(metric, now)} in ${current.period}: ` +
    `${improving ? "an improvement" : "a deterioration"}, as ${lower ? "lower" : "higher"} is better for this metric.`;
  return {
    kind,
    metric,
    message,
    evidence: {
      value: now,
      period: current.period,
      previous_value: before,
      previous_period: previous.period,
      change,
      change_pct: before === 0 ? null : roundTo1((change / Math.abs(before)) * 100),
    },
  };
}

/**
 * The findings of a merchant's snapshot, in this order: strengths (better than at least 75% of peers, in
 * the metric's good direction), weaknesses (at most 25%), then the metrics that improved and those that
 * worsened since `previous` (any change; unchanged metrics give nothing). Within each kind, catalogue order.
 * `where` names the peers in sentences, e.g. "saas (all segments)".
 */
export function merchantInsights(comparisons: readonly MetricComparison[], current: PeriodValues, previous: PeriodValues | null, where: string): Finding[] {
  const byMetric = new Map(comparisons.map((c) => [c.metric, c]));
  const strengths: Finding[] = [];
  const weaknesses: Finding[] = [];
  const improving: Finding[] = [];
  const worsening: Finding[] = [];
  for (const metric of METRICS) {
    const c = byMetric.get(metric);
    if (c !== undefined) {
      if (c.betterThanPct >= STRENGTH_AT) strengths.push(rankFinding("strength", c, where));
      else if (c.betterThanPct <= WEAKNESS_AT) weaknesses.push(rankFinding("weakness", c, where));
    }
    const now = current.metrics[metric];
    const before = previous?.metrics[metric];
    if (previous === null || now === undefined || before === undefined) continue;
    const trend = trendFinding(metric, current, previous, now, before);
    if (trend !== null) (trend.kind === "improving" ? improving : worsening).push(trend);
  }
  return [...strengths, ...weaknesses, ...improving, ...worsening];
}
