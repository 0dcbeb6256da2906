import { histogramEdges } from "./histogram-edges.ts";
import type { SortedSample } from "./sorted-sample.ts";

/** Equal-width histogram: `buckets + 1` ascending edges and one count per bucket. */
export interface Histogram {
  readonly edges: number[];
  readonly counts: number[];
}

/** Throws unless `buckets` is a positive integer. */
export function assertBuckets(buckets: number): void {
  if (!Number.isInteger(buckets) || buckets < 1) {
    throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
  }
}

/**
 * numpy.histogram(sample, bins=buckets) of an ascending sample: equal-width buckets over [min, max],
 * each half-open [a, b) except the last, which is closed. Because the sample is sorted, each bucket
 * boundary is one binary search, so the cost is O(buckets · log n) rather than a pass over every value.
 */
export function histogram(sorted: SortedSample, buckets: number): Histogram {
  assertBuckets(buckets);
  const n = sorted.length;
  if (n === 0) return { edges: histogramEdges(0, 1, buckets), counts: new Array<number>(buckets).fill(0) };
  const edges = histogramEdges(sorted[0] as number, sorted[n - 1] as number, buckets);
  const first = edges[0] as number;
  const denom = (edges[buckets] as number) - first;
  const counts = new Array<number>(buckets);
  // The binary searches ask numpy's own question, "which bucket would numpy's fast path put this
  // value in?", so counts match numpy bit for bit even where rounding makes neighbouring edges equal
  // (huge magnitudes, sub-ulp widths). That bucket index never decreases along a sorted sample.
  const exact = denom > 0 && Number.isFinite(denom);
  let before = 0;
  for (let i = 1; i < buckets; i++) {
    const edge = edges[i] as number;
    let lo = before;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const x = sorted[mid] as number;
      const inEarlier = exact ? numpyBucket(x, first, denom, buckets, edges) < i : x < edge;
      if (inEarlier) lo = mid + 1;
      else hi = mid;
    }
    counts[i - 1] = lo - before;
    before = lo;
  }
  counts[buckets - 1] = n - before;
  return { edges, counts };
}

// numpy's fast-path bucket of x: scale, truncate, then correct by one against the actual edges.
function numpyBucket(x: number, first: number, denom: number, buckets: number, edges: readonly number[]): number {
  let index = Math.trunc(((x - first) / denom) * buckets);
  if (index === buckets) index -= 1;
  if (x < (edges[index] as number)) index -= 1;
  if (index !== buckets - 1 && x >= (edges[index + 1] as number)) index += 1;
  return index;
}
