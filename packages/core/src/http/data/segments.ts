/** GET /data/v1/segments: the segments of a category with data in a period, with their sample sizes. */
import * as v from "valibot";
import { metricsOf } from "../../data/catalog.ts";
import { ALL_SEGMENTS } from "../../data/source.ts";
import { ok } from "../reply.ts";
import { resolvePeriod } from "./cell-lookup.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { categoryParam, periodParam } from "./query-params.ts";

const Integer = v.pipe(v.number(), v.integer());

/** GET /segments. A segment's `sample_size` is its largest metric cell, as in /benchmarks. */
export const segmentsEndpoint = defineDataEndpoint({
  endpoint: "GET /segments",
  operationId: "listSegments",
  summary: "Segments of a category",
  description:
    "The segments with data for the category in one period (default: the latest quarter with data), each with its sample size (distinct businesses in its largest metric cell, as `/benchmarks` counts) and whether it meets the publication minimum, so that segment-level figures are published for it. `all` (every segment aggregated) is not listed.",
  query: v.object({ category: categoryParam, period: v.optional(periodParam) }),
  response: v.object({
    category: v.string(),
    period: v.string(),
    segments: v.array(
      v.object({
        segment: v.string(),
        sample_size: Integer,
        published: v.pipe(v.boolean(), v.description("Whether the sample meets the publication minimum.")),
      }),
    ),
  }),
  errors: [404, 422],
  async handle({ query, source, app }) {
    const { category } = query;
    const period = await resolvePeriod(source, category, ALL_SEGMENTS, query.period);
    const names = await source.segments(category);
    const metrics = metricsOf(category);
    const cells = await Promise.all(names.map((s) => source.cells(category, s, period, metrics)));
    const minimum = app.config.data.minSampleSize;
    const segments: { segment: string; sample_size: number; published: boolean }[] = [];
    names.forEach((segment, i) => {
      let size = 0;
      for (const cell of cells[i]?.values() ?? []) size = Math.max(size, cell.sampleSize);
      if (size > 0) segments.push({ segment, sample_size: size, published: size >= minimum });
    });
    return ok({ category, period, segments });
  },
});
