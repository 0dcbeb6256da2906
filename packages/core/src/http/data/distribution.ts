/** GET /data/v1/benchmarks/distribution: an equal-width histogram of a metric with the sample's summary. */
import * as v from "valibot";
import { histogram } from "../../stats/histogram.ts";
import { okJson } from "../reply.ts";
import { cellJson, cellStats } from "./cell-summary.ts";
import { assertOffered, requireCell, resolvePeriod } from "./cell-lookup.ts";
import { defineDataEndpoint, segmentOf } from "./data-endpoint.ts";
import { categoryParam, integerParam, metricParam, periodParam, segmentParam } from "./query-params.ts";
import { roundOutput } from "./round-output.ts";

const Integer = v.pipe(v.number(), v.integer());

/** GET /benchmarks/distribution. Buckets as numpy.histogram: half-open except the last; `pct` in percent. */
export const distributionEndpoint = defineDataEndpoint({
  endpoint: "GET /benchmarks/distribution",
  operationId: "getDistribution",
  summary: "Histogram of a metric",
  description:
    "Equal-width buckets from the sample's minimum to its maximum, each half-open except the last, which is closed (numpy.histogram). `pct` is the bucket's share of the sample in percent. `stats.std_dev` is the population standard deviation. Uses the latest period with data (quarterly or monthly; a quarter before the month it ends with) unless `period` is given.",
  query: v.object({
    category: categoryParam,
    metric: metricParam,
    buckets: v.optional(integerParam(1, 100, "Number of equal-width buckets."), "20"),
    segment: v.optional(segmentParam),
    period: v.optional(periodParam),
  }),
  response: v.object({
    metric: v.string(),
    category: v.string(),
    segment: v.string(),
    period: v.string(),
    histogram: v.array(v.object({ bucket_start: v.number(), bucket_end: v.number(), count: Integer, pct: v.number() })),
    sample_size: Integer,
    stats: v.object({ min: v.number(), max: v.number(), mean: v.number(), std_dev: v.number() }),
  }),
  errors: [404, 422],
  async handle({ query, source, app }) {
    const { category, metric, buckets } = query;
    assertOffered(category, metric);
    const segment = segmentOf(query.segment);
    const period = await resolvePeriod(source, category, segment, query.period);
    const cell = await requireCell(source, category, segment, period, metric, app.config.data.minSampleSize);
    // Everything after the labels depends on the cell and the bucket count only.
    const rest = cellJson(cell, `hist:${buckets}`, () => {
      const h = histogram(cell.sorted, buckets);
      const n = cell.sorted.length;
      const rows = new Array<{ bucket_start: number; bucket_end: number; count: number; pct: number }>(buckets);
      for (let i = 0; i < buckets; i++) {
        const count = h.counts[i] as number;
        rows[i] = { bucket_start: roundOutput(h.edges[i] as number), bucket_end: roundOutput(h.edges[i + 1] as number), count, pct: roundOutput((count / n) * 100) };
      }
      return `"histogram":${JSON.stringify(rows)},"sample_size":${cell.sampleSize},"stats":${JSON.stringify(cellStats(cell))}`;
    });
    return okJson(`{"metric":"${metric}","category":"${category}","segment":${JSON.stringify(segment)},"period":${JSON.stringify(period)},${rest}}`);
  },
});
