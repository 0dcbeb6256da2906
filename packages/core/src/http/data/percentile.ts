/** GET /data/v1/benchmarks/percentile: where a value ranks in a category's distribution of a metric. */
import * as v from "valibot";
import { roundTo1 } from "../../stats/round-to1.ts";
import { okJson } from "../reply.ts";
import { jsonNumber } from "./round-output.ts";
import { cellJson, cellPercentiles, publishedRank } from "./cell-summary.ts";
import { assertOffered, requireCell, resolvePeriod } from "./cell-lookup.ts";
import { defineDataEndpoint, segmentOf } from "./data-endpoint.ts";
import { interpretPercentileJson } from "./interpretation.ts";
import { categoryParam, metricParam, periodParam, segmentParam, valueParam } from "./query-params.ts";

/**
 * GET /benchmarks/percentile. The rank is scipy's `percentileofscore(kind="mean")`, one decimal, in cells of at
 * least 1,000 × the publication minimum; in smaller ones it is read from the published percentile set, so that
 * rank queries cannot reconstruct the cell (docs/privacy.md).
 */
export const percentileEndpoint = defineDataEndpoint({
  endpoint: "GET /benchmarks/percentile",
  operationId: "getPercentileRank",
  summary: "Percentile rank of a value within a category",
  description:
    "The percentile rank (0–100, one decimal) of `value` among the businesses of the cell: in a cell of at least 1,000 × the publication minimum, the mean of the strict and weak ranks (scipy `percentileofscore`, kind `mean`); in a smaller one, the rank on the piecewise-linear curve through the cell's published percentile set ((p10, 10) … (p90, 90), extended to 0 and 100 with its outer slopes), so that rank queries cannot reconstruct the cell's values (docs/privacy.md); with a sentence that knows whether lower values are better for the metric, and the cell's p50, p75 and p90.",
  query: v.object({ category: categoryParam, metric: metricParam, value: valueParam, segment: v.optional(segmentParam), period: v.optional(periodParam) }),
  response: v.object({
    metric: v.string(),
    value: v.number(),
    category: v.string(),
    segment: v.string(),
    period: v.string(),
    percentile: v.pipe(v.number(), v.minValue(0), v.maxValue(100)),
    interpretation: v.string(),
    context: v.object({ p50: v.number(), p75: v.number(), p90: v.number() }),
  }),
  errors: [404, 422],
  async handle({ query, source, app }) {
    const { category, metric, value } = query;
    assertOffered(category, metric);
    const segment = segmentOf(query.segment);
    const period = await resolvePeriod(source, category, segment, query.period);
    const minimum = app.config.data.minSampleSize;
    const cell = await requireCell(source, category, segment, period, metric, minimum);
    const percentile = roundTo1(publishedRank(cell, value, minimum));
    const context = cellJson(cell, "context", () => {
      const p = cellPercentiles(cell);
      return JSON.stringify({ p50: p.p50, p75: p.p75, p90: p.p90 });
    });
    const interpretation = interpretPercentileJson(metric, value, percentile, category, segment, period);
    return okJson(
      `{"metric":"${metric}","value":${value},"category":"${category}","segment":${JSON.stringify(segment)},"period":${JSON.stringify(period)},"percentile":${jsonNumber(percentile)},"interpretation":${interpretation},"context":${context}}`,
    );
  },
});
