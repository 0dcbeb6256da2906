/** The `interpretation` sentence of a percentile rank, aware of whether lower values are better for the metric. */
import type { Category, Metric } from "../../data/catalog.ts";
import { METRIC_INFO } from "../../data/catalog.ts";
import { formatMetricValue, metricNounWithArticle } from "../../data/format-metric-value.ts";
import { cellName } from "./data-endpoint.ts";

function band(standing: number): string {
  if (standing >= 90) return "in the top 10%";
  if (standing >= 75) return "in the top quartile";
  if (standing > 50) return "above the median";
  if (standing === 50) return "at the median";
  if (standing > 25) return "below the median";
  if (standing > 10) return "in the bottom quartile";
  return "in the bottom 10%";
}

/**
 * A sentence such as "A churn rate of 3% is at percentile 20.0 of saas (all segments) in 2026-Q3. Lower is
 * better for this metric, so it is better than about 80% of peers: in the top quartile." `percentile` is the
 * rounded rank (0–100); standing is measured in the metric's good direction.
 */
export function interpretPercentile(metric: Metric, value: number, percentile: number, category: Category, segment: string, period: string): string {
  const info = METRIC_INFO[metric];
  const lowerIsBetter = info.direction === "lower_is_better";
  const standing = lowerIsBetter ? 100 - percentile : percentile;
  const share = Math.round(standing);
  const noun = metricNounWithArticle(metric);
  const head = `${noun.charAt(0).toUpperCase()}${noun.slice(1)} of ${formatMetricValue(metric, value)} is at percentile ${percentile.toFixed(1)} of ${cellName(category, segment)} in ${period}.`;
  const direction = lowerIsBetter ? "Lower is better for this metric, so it" : "Higher is better for this metric, so it";
  return `${head} ${direction} is better than about ${share}% of peers: ${band(standing)}.`;
}
