import { pairwiseSum } from "./pairwise-sum.ts";
import type { SortedSample } from "./sorted-sample.ts";

/** The distribution endpoint's `stats`: extremes, mean and population standard deviation. */
export interface SummaryStats {
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly std_dev: number;
}

// Pairwise sum of (x − centre)², the same blocking as pairwiseSum, without materialising the squares.
function squaredDeviations(values: SortedSample, centre: number, start: number, n: number): number {
  if (n <= 128) {
    let r0 = 0;
    let r1 = 0;
    let r2 = 0;
    let r3 = 0;
    const end4 = start + (n - (n % 4));
    let i = start;
    for (; i < end4; i += 4) {
      const d0 = (values[i] as number) - centre;
      const d1 = (values[i + 1] as number) - centre;
      const d2 = (values[i + 2] as number) - centre;
      const d3 = (values[i + 3] as number) - centre;
      r0 += d0 * d0;
      r1 += d1 * d1;
      r2 += d2 * d2;
      r3 += d3 * d3;
    }
    for (; i < start + n; i++) {
      const d = (values[i] as number) - centre;
      r0 += d * d;
    }
    return r0 + r1 + (r2 + r3);
  }
  let half = n >>> 1;
  half -= half % 8;
  return squaredDeviations(values, centre, start, half) + squaredDeviations(values, centre, start + half, n - half);
}

/** Min, max, mean and population standard deviation (ddof 0, two passes like numpy.std) of an ascending sample; NaNs when empty. */
export function summaryStats(sorted: SortedSample): SummaryStats {
  const n = sorted.length;
  if (n === 0) return { min: Number.NaN, max: Number.NaN, mean: Number.NaN, std_dev: Number.NaN };
  const mean = pairwiseSum(sorted) / n;
  // A second pass over deviations from the mean avoids the cancellation of E[x²] − E[x]².
  const std = Math.sqrt(squaredDeviations(sorted, mean, 0, n) / n);
  return { min: sorted[0] as number, max: sorted[n - 1] as number, mean, std_dev: std };
}
