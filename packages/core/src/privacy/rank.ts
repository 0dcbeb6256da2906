/**
 * Percentile ranks that cannot reconstruct a cell (issue 14, route 3).
 *
 * An exact rank (scipy's `percentileofscore`, one decimal) is a step function of the value that steps at
 * every business's value while a step of 0.1 is finer than one business (n < 1,000): binary search on the
 * value then recovers each business's exact value, at about 40 queries per business. Any rounding of the
 * exact rank still steps at some businesses' values, so coarser resolution only thins the leak out.
 *
 * The defence: unless the cell is so large that a step of the rank (0.1 percentage points) spans at least
 * the publication minimum of businesses (n ≥ 1,000 × minimum), the rank is read from the cell's published
 * percentile set instead: the piecewise-linear curve through (p10, 10), (p25, 25), (p50, 50), (p75, 75),
 * (p90, 90), extended to 0 below p10 and to 100 above p90 with the slopes of its outer pieces. It is a
 * function of figures already published (by /benchmarks), so asking it any number of questions teaches
 * nothing more than the percentile set. The percentile sets themselves stay numpy-exact.
 */
import type { PercentileSet } from "../stats/percentile-set.ts";

/** The rank resolution of the API: one decimal of a percentage. */
const RANK_STEPS = 1000;

/** Whether a cell of `n` businesses may answer exact ranks: one rank step covers at least `minimum` businesses. */
export function exactRanksAllowed(n: number, minimum: number): boolean {
  return n >= RANK_STEPS * Math.max(1, minimum);
}

/**
 * The rank of `value` (0–100, unrounded) on the curve through the published percentile set; where the curve
 * is flat at `value` (tied percentiles), the mean of its lowest and highest rank there, as scipy's "mean" kind.
 */
export function interpolatedRank(set: Pick<PercentileSet, "p10" | "p25" | "p50" | "p75" | "p90">, value: number): number {
  const { p10, p25, p50, p75, p90 } = set;
  const xs = [p10 - ((p25 - p10) * 10) / 15, p10, p25, p50, p75, p90, p90 + ((p90 - p75) * 10) / 15];
  const rs = [0, 10, 25, 50, 75, 90, 100];
  const last = xs.length - 1;
  if (!(value >= (xs[0] as number))) return Number.isNaN(value) ? Number.NaN : 0;
  if (value > (xs[last] as number)) return 100;
  const at = (i: number): number => {
    // The rank at `value` on the piece from knot i to knot i + 1 (value strictly inside it).
    const x0 = xs[i] as number;
    const x1 = xs[i + 1] as number;
    return (rs[i] as number) + (((rs[i + 1] as number) - (rs[i] as number)) * (value - x0)) / (x1 - x0);
  };
  // Highest rank whose quantile is ≤ value.
  let i = last;
  while (i > 0 && (xs[i] as number) > value) i--;
  const weak = (xs[i] as number) === value || i === last ? (rs[i] as number) : at(i);
  // Lowest rank whose quantile is ≥ value.
  let j = 0;
  while (j < last && (xs[j] as number) < value) j++;
  const strict = (xs[j] as number) === value || j === 0 ? (rs[j] as number) : at(j - 1);
  return (weak + strict) / 2;
}
