import { mean } from "./mean.ts";
import { quantileSorted } from "./quantile-sorted.ts";
import type { SortedSample } from "./sorted-sample.ts";

/** The spec's percentile set: five type-7 percentiles and the arithmetic mean. */
export interface PercentileSet {
  readonly p10: number;
  readonly p25: number;
  readonly p50: number;
  readonly p75: number;
  readonly p90: number;
  readonly mean: number;
}

/** The p10, p25, p50, p75, p90 (numpy "linear") and mean of an ascending sample; NaNs when empty. */
export function percentileSet(sorted: SortedSample): PercentileSet {
  return {
    p10: quantileSorted(sorted, 0.1),
    p25: quantileSorted(sorted, 0.25),
    p50: quantileSorted(sorted, 0.5),
    p75: quantileSorted(sorted, 0.75),
    p90: quantileSorted(sorted, 0.9),
    mean: mean(sorted),
  };
}
