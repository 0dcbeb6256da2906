/** GET /data/v1/segments: the segments of a category with data in a period, with their sample sizes. */
import * as v from "valibot";
import type { Metric } from "../../data/catalog.ts";
import { metricsOf } from "../../data/catalog.ts";
import type { Cell } from "../../data/source.ts";
import { ALL_SEGMENTS } from "../../data/source.ts";
import { countBasis, sampleSizeOf } from "../../privacy/count-basis.ts";
import type { WithheldReason } from "../../privacy/suppression.ts";
import { combinedReason } from "../../privacy/suppression.ts";
import { periodGroups } from "./publication.ts";
import { ok } from "../reply.ts";
import { resolvePeriod } from "./cell-lookup.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { categoryParam, periodParam } from "./query-params.ts";

const Integer = v.pipe(v.number(), v.integer());

/**
 * GET /segments. A segment's `sample_size` is the distinct businesses of its published metric cells, counted as
 * /benchmarks counts them (only metrics whose every cell is published are counted together, `privacy/count-basis.ts`); a
 * segment with no published cell shows no size, only why (a withheld cell's size is never published).
 */
export const segmentsEndpoint = defineDataEndpoint({
  endpoint: "GET /segments",
  operationId: "listSegments",
  summary: "Segments of a category",
  description:
    "The segments with data for the category in one period (default: the latest period with data, quarterly or monthly), each with its sample size (distinct businesses that reported at least one of its published metrics, counted as `/benchmarks` counts) and whether any of its figures are published. A segment with nothing published has `sample_size` null and a `withheld_reason`: `below_minimum` (fewer businesses than the publication minimum) or `complementary` (withheld so that a smaller segment cannot be derived by subtraction; see docs/privacy.md). `all` (every segment aggregated) is not listed.",
  query: v.object({ category: categoryParam, period: v.optional(periodParam) }),
  response: v.object({
    category: v.string(),
    period: v.string(),
    segments: v.array(
      v.object({
        segment: v.string(),
        sample_size: v.pipe(v.nullable(Integer), v.description("Distinct businesses of the segment's published metrics (one that reports several counts once), or a lower bound when segments publish different metrics (docs/privacy.md); null when nothing is published.")),
        published: v.pipe(v.boolean(), v.description("Whether any of the segment's figures are published.")),
        withheld_reason: v.nullable(v.picklist(["below_minimum", "complementary"])),
      }),
    ),
  }),
  errors: [404, 422],
  async handle({ query, source, app }) {
    const { category } = query;
    const period = await resolvePeriod(source, category, ALL_SEGMENTS, query.period);
    const names = await source.segments(category);
    const minimum = app.config.data.minSampleSize;
    const groups = await periodGroups(source, category, period, minimum, names);
    const basis = countBasis(groups, minimum);
    const segments: { segment: string; sample_size: number | null; published: boolean; withheld_reason: WithheldReason | null }[] = [];
    for (const segment of names) {
      const published = new Map<Metric, Cell>();
      const withheld: WithheldReason[] = [];
      for (const [m, g] of groups) {
        const cell = g.segments.get(segment);
        if (cell === undefined) continue;
        const reason = g.reasons.get(segment) ?? null;
        if (reason === null) published.set(m, cell);
        else withheld.push(reason);
      }
      if (published.size === 0 && withheld.length === 0) continue;
      if (published.size > 0) segments.push({ segment, sample_size: sampleSizeOf(published, basis), published: true, withheld_reason: null });
      else segments.push({ segment, sample_size: null, published: false, withheld_reason: combinedReason(withheld) });
    }
    return ok({ category, period, segments });
  },
});
