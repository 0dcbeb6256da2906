/** GET /data/v1/segments/breakdown: one metric's percentile set in every segment of a category (and `all`). */
import * as v from "valibot";
import { ALL_SEGMENTS } from "../../data/source.ts";
import type { PercentileSet } from "../../stats/percentile-set.ts";
import { ok } from "../reply.ts";
import { cellPercentiles } from "./cell-summary.ts";
import { assertOffered, insufficientSample, noData, resolvePeriod } from "./cell-lookup.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { PercentileSetSchema } from "./doc-schemas.ts";
import { categoryParam, metricParam, periodParam } from "./query-params.ts";

const Integer = v.pipe(v.number(), v.integer());

/** GET /segments/breakdown. A segment below the publication minimum is listed as withheld, its figures not given. */
export const segmentBreakdownEndpoint = defineDataEndpoint({
  endpoint: "GET /segments/breakdown",
  operationId: "getSegmentBreakdown",
  summary: "A metric broken down by segment",
  description:
    "The percentile set and sample size of one metric for the whole category (`all`, first) and each of its segments with data, in one period (default: the latest quarter with data). The publication minimum applies per segment: a segment below it is listed with `withheld: true` and `percentiles: null`. When no segment (nor `all`) meets it, the answer is 404 `data.insufficient_sample`.",
  query: v.object({ category: categoryParam, metric: metricParam, period: v.optional(periodParam) }),
  response: v.object({
    category: v.string(),
    metric: v.string(),
    period: v.string(),
    segments: v.array(
      v.object({
        segment: v.pipe(v.string(), v.description("`all` for the whole category, then each segment.")),
        sample_size: Integer,
        withheld: v.pipe(v.boolean(), v.description("True when the sample is below the publication minimum: the figures are not published.")),
        percentiles: v.nullable(PercentileSetSchema),
      }),
    ),
  }),
  errors: [404, 422],
  async handle({ query, source, app }) {
    const { category, metric } = query;
    assertOffered(category, metric);
    const period = await resolvePeriod(source, category, ALL_SEGMENTS, query.period);
    const names = [ALL_SEGMENTS, ...(await source.segments(category))];
    const cells = await Promise.all(names.map((s) => source.cells(category, s, period, [metric])));
    const minimum = app.config.data.minSampleSize;
    const segments: { segment: string; sample_size: number; withheld: boolean; percentiles: PercentileSet | null }[] = [];
    let published = 0;
    let largestRefused = 0;
    names.forEach((segment, i) => {
      const cell = cells[i]?.get(metric);
      if (cell === undefined) return;
      const withheld = cell.sampleSize < minimum;
      if (withheld) largestRefused = Math.max(largestRefused, cell.sampleSize);
      else published++;
      segments.push({ segment, sample_size: cell.sampleSize, withheld, percentiles: withheld ? null : cellPercentiles(cell) });
    });
    if (segments.length === 0) return noData(source, category, ALL_SEGMENTS, period);
    if (published === 0) throw insufficientSample(category, ALL_SEGMENTS, period, metric, largestRefused, minimum);
    return ok({ category, metric, period, segments });
  },
});
