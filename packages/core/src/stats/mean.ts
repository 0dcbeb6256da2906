import { pairwiseSum } from "./pairwise-sum.ts";
import type { SortedSample } from "./sorted-sample.ts";

/** The arithmetic mean of a sample (pairwise summation, like numpy.mean); NaN when empty. */
export function mean(values: SortedSample): number {
  const n = values.length;
  return n === 0 ? Number.NaN : pairwiseSum(values) / n;
}
