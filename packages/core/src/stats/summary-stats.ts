import { pairwiseSum } from "./pairwise-sum.ts";
import type { SortedSample } from "./sorted-sample.ts";

/** The distribution endpoint's `stats`: extremes, mean and population standard deviation. */
export interface SummaryStats {
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly std_dev: number;
}

// Pairwise sum of (x − centre)², blocked exactly as pairwiseSum (and numpy's sum of the squared deviations):
// fewer than 8 summed in order, up to 128 in eight accumulators, larger halves split at a multiple of 8.
function squaredDeviations(values: SortedSample, centre: number, start: number, n: number): number {
  const sq = (i: number): number => {
    const d = (values[i] as number) - centre;
    return d * d;
  };
  if (n < 8) {
    let s = 0;
    for (let i = start; i < start + n; i++) s += sq(i);
    return s;
  }
  if (n <= 128) {
    let r0 = sq(start);
    let r1 = sq(start + 1);
    let r2 = sq(start + 2);
    let r3 = sq(start + 3);
    let r4 = sq(start + 4);
    let r5 = sq(start + 5);
    let r6 = sq(start + 6);
    let r7 = sq(start + 7);
    const end8 = start + (n - (n % 8));
    let i = start + 8;
    for (; i < end8; i += 8) {
      r0 += sq(i);
      r1 += sq(i + 1);
      r2 += sq(i + 2);
      r3 += sq(i + 3);
      r4 += sq(i + 4);
      r5 += sq(i + 5);
      r6 += sq(i + 6);
      r7 += sq(i + 7);
    }
    let s = r0 + r1 + (r2 + r3) + (r4 + r5 + (r6 + r7));
    for (; i < start + n; i++) s += sq(i);
    return s;
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
