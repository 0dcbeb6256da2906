import { countAtOrBelow, countBelow } from "./bisect.ts";
import type { SortedSample } from "./sorted-sample.ts";

/**
 * Percentile rank of `value` in an ascending sample, 0–100: scipy.stats.percentileofscore with
 * kind="mean", i.e. the mean of the strict and weak ranks, found by two binary searches; NaN when empty.
 */
export function percentileRank(sorted: SortedSample, value: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  // scipy computes (l + r) * (50 / n), which double-rounds and can give 100.00000000000001 (n = 11);
  // the integer product first and one correctly rounded division stay within [0, 100].
  return ((countBelow(sorted, value) + countAtOrBelow(sorted, value)) * 50) / n;
}
