/** GET /data/v1/segments/breakdown: one metric's percentile set in every segment of a category (and `all`). */
import * as v from "valibot";
import type { Cell } from "../../data/source.ts";
import { ALL_SEGMENTS } from "../../data/source.ts";
import type { WithheldReason } from "../../privacy/suppression.ts";
import type { PercentileSet } from "../../stats/percentile-set.ts";
import { ok } from "../reply.ts";
import { cellPercentiles } from "./cell-summary.ts";
import { assertOffered, insufficientSample, noData, resolvePeriod } from "./cell-lookup.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { PercentileSetSchema } from "./doc-schemas.ts";
import { cellGroup, groupRefusal } from "./publication.ts";
import { categoryParam, metricParam, periodParam } from "./query-params.ts";

const Integer = v.pipe(v.number(), v.integer());

const Reason = v.nullable(
  v.pipe(
    v.picklist(["below_minimum", "complementary"]),
    v.description("Why the figures are withheld: `below_minimum` (fewer businesses than the publication minimum) or `complementary` (withheld so that a smaller segment cannot be derived by subtraction; see docs/privacy.md). Null when published."),
  ),
);

/** GET /segments/breakdown. A withheld segment is listed without figures and without its size, with the reason. */
export const segmentBreakdownEndpoint = defineDataEndpoint({
  endpoint: "GET /segments/breakdown",
  operationId: "getSegmentBreakdown",
  summary: "A metric broken down by segment",
  description:
    "The percentile set and sample size of one metric for the whole category (`all`, first) and each of its segments with data, in one period (default: the latest period with data, quarterly or monthly). A segment below the publication minimum, or withheld so that it cannot be derived by subtraction (complementary suppression), is listed with `withheld: true`, its `withheld_reason`, and `sample_size` and `percentiles` null. When nothing is published, the answer is 404 `data.insufficient_sample`.",
  query: v.object({ category: categoryParam, metric: metricParam, period: v.optional(periodParam) }),
  response: v.object({
    category: v.string(),
    metric: v.string(),
    period: v.string(),
    segments: v.array(
      v.object({
        segment: v.pipe(v.string(), v.description("`all` for the whole category, then each segment.")),
        sample_size: v.pipe(v.nullable(Integer), v.description("Distinct businesses; null when withheld (a withheld cell's size is not published).")),
        withheld: v.pipe(v.boolean(), v.description("True when the figures are not published.")),
        withheld_reason: Reason,
        percentiles: v.nullable(PercentileSetSchema),
      }),
    ),
  }),
  errors: [404, 422],
  async handle({ query, source, app }) {
    const { category, metric } = query;
    assertOffered(category, metric);
    const period = await resolvePeriod(source, category, ALL_SEGMENTS, query.period);
    const minimum = app.config.data.minSampleSize;
    const group = await cellGroup(source, category, period, metric, minimum);
    type Row = { segment: string; sample_size: number | null; withheld: boolean; withheld_reason: WithheldReason | null; percentiles: PercentileSet | null };
    const segments: Row[] = [];
    let published = 0;
    const add = (segment: string, cell: Cell, reason: WithheldReason | null): void => {
      if (reason === null) {
        published++;
        segments.push({ segment, sample_size: cell.sampleSize, withheld: false, withheld_reason: null, percentiles: cellPercentiles(cell) });
      } else segments.push({ segment, sample_size: null, withheld: true, withheld_reason: reason, percentiles: null });
    };
    if (group.all !== undefined) add(ALL_SEGMENTS, group.all, group.allReason);
    for (const [segment, cell] of group.segments) add(segment, cell, group.reasons.get(segment) ?? null);
    if (segments.length === 0) return noData(source, category, ALL_SEGMENTS, period);
    // The refusal names `all`, so it gives `all`'s reason, the one every endpoint reading that cell gives.
    if (published === 0) throw insufficientSample(category, ALL_SEGMENTS, period, metric, groupRefusal(group), minimum);
    return ok({ category, metric, period, segments });
  },
});
