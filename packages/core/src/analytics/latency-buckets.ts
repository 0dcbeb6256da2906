/** The fixed latency histogram of usage analytics: bucket bounds, and percentiles read from bucket counts. */

/**
 * The upper bounds (ms, inclusive) of every bucket but the last, which takes everything slower. Fixed, so that
 * histograms of any instances and hours add up bucket by bucket.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

/** The number of buckets (the bounds, and one above the last). */
export const LATENCY_BUCKETS: number = LATENCY_BOUNDS_MS.length + 1;

/** The bucket a duration falls in: the first whose bound is at least `ms`. */
export function latencyBucket(ms: number): number {
  const bounds = LATENCY_BOUNDS_MS;
  let i = 0;
  while (i < bounds.length && ms > bounds[i]!) i++;
  return i;
}

/**
 * The `q`-quantile (0–1) of a histogram, as the upper bound of the bucket holding the rank `ceil(q × n)`, capped
 * by the slowest duration seen (`maxMs`; the bound of the last bucket). Null for an empty histogram. An upper
 * bound, never an interpolation: "p95 ≤ 5 ms" is what the buckets can tell.
 */
export function latencyQuantile(buckets: ArrayLike<number>, maxMs: number, q: number): number | null {
  let n = 0;
  for (let i = 0; i < buckets.length; i++) n += buckets[i]!;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(q * n));
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i]!;
    if (seen >= rank) return i < LATENCY_BOUNDS_MS.length ? Math.min(LATENCY_BOUNDS_MS[i]!, maxMs) : maxMs;
  }
  return maxMs;
}
