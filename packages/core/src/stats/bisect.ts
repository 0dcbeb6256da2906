import type { SortedSample } from "./sorted-sample.ts";

/** How many values of an ascending sample are strictly less than `value` (binary search, O(log n)). */
export function countBelow(sorted: SortedSample, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many values of an ascending sample are less than or equal to `value` (binary search, O(log n)). */
export function countAtOrBelow(sorted: SortedSample, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
