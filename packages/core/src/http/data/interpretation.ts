/** The `interpretation` sentence of a percentile rank, aware of whether lower values are better for the metric. */
import type { Category, Metric } from "../../data/catalog.ts";
import { METRIC_INFO } from "../../data/catalog.ts";
import { formatMetricValue, metricNounWithArticle } from "../../data/format-metric-value.ts";
import { cellName } from "./data-endpoint.ts";
import { jsonInner } from "./round-output.ts";

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
  return sentence(subjectOf(metric), metric, value, percentile, cellName(category, segment), period);
}

// The sentence's subject per metric ("A churn rate", "An LTV to CAC ratio"), plain and as JSON string content,
// worked out once.
const SUBJECTS = new Map<Metric, string>();
const SUBJECTS_JSON = new Map<Metric, string>();

function subjectOf(metric: Metric): string {
  let subject = SUBJECTS.get(metric);
  if (subject === undefined) {
    const noun = metricNounWithArticle(metric);
    SUBJECTS.set(metric, (subject = `${noun.charAt(0).toUpperCase()}${noun.slice(1)}`));
  }
  return subject;
}

/**
 * The same sentence as JSON text, quoted: exactly `JSON.stringify(interpretPercentile(…))`. Only the parts that
 * come from the request or the data (the cell's name, the period) are checked for characters to escape; the
 * rest is the catalogue's subject (escaped once) and this module's ASCII and formatted numbers. (Checking the
 * whole sentence cost a flattening of it and a scan of ~150 characters on every percentile request.)
 */
export function interpretPercentileJson(metric: Metric, value: number, percentile: number, category: Category, segment: string, period: string): string {
  let subject = SUBJECTS_JSON.get(metric);
  if (subject === undefined) SUBJECTS_JSON.set(metric, (subject = jsonInner(subjectOf(metric))));
  return `"${sentence(subject, metric, value, percentile, jsonInner(cellName(category, segment)), jsonInner(period))}"`;
}

function sentence(subject: string, metric: Metric, value: number, percentile: number, place: string, period: string): string {
  const info = METRIC_INFO[metric];
  const lowerIsBetter = info.direction === "lower_is_better";
  const standing = lowerIsBetter ? 100 - percentile : percentile;
  const share = Math.round(standing);
  const head = `${subject} of ${formatMetricValue(metric, value)} is at percentile ${percentile.toFixed(1)} of ${place} in ${period}.`;
  const direction = lowerIsBetter ? "Lower is better for this metric, so it" : "Higher is better for this metric, so it";
  return `${head} ${direction} is better than about ${share}% of peers: ${band(standing)}.`;
}
