/** Metric values and names in sentences: ratios as percentages, multiples with an `x`, money as a plain number. */
import type { Metric } from "./catalog.ts";
import { METRIC_INFO } from "./catalog.ts";

/** A value as a sentence shows it: 0.4412 → "44.12%", 3.1 → "3.1x", 1234.5 → "1234.5". */
export function formatMetricValue(metric: Metric, value: number): string {
  const unit = METRIC_INFO[metric].unit;
  if (unit === "ratio") return `${Number((value * 100).toFixed(2))}%`;
  if (unit === "multiple") return `${Number(value.toFixed(2))}x`;
  return String(Number(value.toFixed(2)));
}

// Worked out once per metric: the percentile sentence asks on every request.
const NOUNS = Object.fromEntries(Object.values(METRIC_INFO).map((m) => [m.key, m.label.charAt(0).toLowerCase() + m.label.slice(1)])) as Record<Metric, string>;

/** The metric's label as it reads inside a sentence: "Churn rate" → "churn rate". */
export function metricNoun(metric: Metric): string {
  return NOUNS[metric];
}
