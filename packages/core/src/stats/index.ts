/** Statistics over ascending-sorted samples: percentiles, percentile rank, histograms, summaries. */
export type { SortedSample } from "./sorted-sample.ts";
export { countBelow, countAtOrBelow } from "./bisect.ts";
export { quantileSorted } from "./quantile-sorted.ts";
export { pairwiseSum } from "./pairwise-sum.ts";
export { mean } from "./mean.ts";
export { percentileSet } from "./percentile-set.ts";
export type { PercentileSet } from "./percentile-set.ts";
export { percentileRank } from "./percentile-rank.ts";
export { roundTo1 } from "./round-to1.ts";
export { histogram } from "./histogram.ts";
export type { Histogram } from "./histogram.ts";
export { histogramEdges } from "./histogram-edges.ts";
export { summaryStats } from "./summary-stats.ts";
export type { SummaryStats } from "./summary-stats.ts";
