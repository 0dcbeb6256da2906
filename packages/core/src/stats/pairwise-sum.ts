import type { SortedSample } from "./sorted-sample.ts";

const BLOCK = 128;

function blockSum(values: SortedSample, start: number, n: number): number {
  if (n < 8) {
    let s = 0;
    for (let i = start; i < start + n; i++) s += values[i] as number;
    return s;
  }
  if (n <= BLOCK) {
    let r0 = values[start] as number;
    let r1 = values[start + 1] as number;
    let r2 = values[start + 2] as number;
    let r3 = values[start + 3] as number;
    let r4 = values[start + 4] as number;
    let r5 = values[start + 5] as number;
    let r6 = values[start + 6] as number;
    let r7 = values[start + 7] as number;
    const end8 = start + (n - (n % 8));
    let i = start + 8;
    for (; i < end8; i += 8) {
      r0 += values[i] as number;
      r1 += values[i + 1] as number;
      r2 += values[i + 2] as number;
      r3 += values[i + 3] as number;
      r4 += values[i + 4] as number;
      r5 += values[i + 5] as number;
      r6 += values[i + 6] as number;
      r7 += values[i + 7] as number;
    }
    let s = (r0 + r1 + (r2 + r3)) + (r4 + r5 + (r6 + r7));
    for (; i < start + n; i++) s += values[i] as number;
    return s;
  }
  let half = n >>> 1;
  half -= half % 8;
  return blockSum(values, start, half) + blockSum(values, start + half, n - half);
}

/**
 * Sum of all values by numpy's pairwise summation (eight accumulators per block of 128, halves above):
 * error grows like O(log n) rather than O(n), and the independent accumulators also make it fast.
 */
export function pairwiseSum(values: SortedSample): number {
  return blockSum(values, 0, values.length);
}
