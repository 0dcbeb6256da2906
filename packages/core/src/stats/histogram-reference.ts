import { assertBuckets } from "./histogram.ts";
import type { Histogram } from "./histogram.ts";
import { histogramEdges } from "./histogram-edges.ts";

/**
 * A line-for-line port of numpy.histogram's equal-bin fast path (any order of values, one pass):
 * the test oracle for `histogram`, not used by the service.
 */
export function histogramReference(values: readonly number[] | Float64Array, buckets: number): Histogram {
  assertBuckets(buckets);
  let min = Infinity;
  let max = -Infinity;
  for (const x of values) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const edges = values.length === 0 ? histogramEdges(0, 1, buckets) : histogramEdges(min, max, buckets);
  const first = edges[0] as number;
  const last = edges[buckets] as number;
  const denom = last - first;
  const counts = new Array<number>(buckets).fill(0);
  for (const x of values) {
    if (!(x >= first && x <= last)) continue;
    let index = Math.trunc(((x - first) / denom) * buckets);
    if (index === buckets) index -= 1;
    if (x < (edges[index] as number)) index -= 1;
    if (x >= (edges[index + 1] as number) && index !== buckets - 1) index += 1;
    counts[index] = (counts[index] as number) + 1;
  }
  return { edges, counts };
}
