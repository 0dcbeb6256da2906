import type { SortedSample } from "./sorted-sample.ts";

/**
 * The `q`-quantile (0 ≤ q ≤ 1) of an ascending sample, Hyndman–Fan type 7, computed exactly as
 * numpy.percentile(method="linear") does; NaN for an empty sample or a `q` outside [0, 1].
 */
export function quantileSorted(sorted: SortedSample, q: number): number {
  const n = sorted.length;
  if (n === 0 || !(q >= 0 && q <= 1)) return Number.NaN;
  const virtual = (n - 1) * q;
  if (virtual >= n - 1) return sorted[n - 1] as number;
  const below = Math.floor(virtual);
  const t = virtual - below;
  const a = sorted[below] as number;
  const b = sorted[below + 1] as number;
  const diff = b - a;
  // numpy's _lerp interpolates from the nearer end, which keeps the result monotone in t and exact at t = 1.
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}
