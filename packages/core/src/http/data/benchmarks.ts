/** GET /data/v1/benchmarks: the percentile set of every metric of a category whose cell meets the publication minimum. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import type { Metric } from "../../data/catalog.ts";
import { metricsOf } from "../../data/catalog.ts";
import type { Cell } from "../../data/source.ts";
import { sampleSizeOf } from "../../privacy/count-basis.ts";
import { okJson } from "../reply.ts";
import { cellPercentilesJson } from "./cell-summary.ts";
import { insufficientSample, noData, resolveQuarter } from "./cell-lookup.ts";
import { defineDataEndpoint, segmentOf } from "./data-endpoint.ts";
import { countBasisOf, withheldReasons } from "./publication.ts";
import type { WithheldReason } from "../../privacy/suppression.ts";
import { combinedReason } from "../../privacy/suppression.ts";
import { PercentileSetSchema, Timestamp } from "./doc-schemas.ts";
import { categoryParam, quarterDefaultPeriodParam, segmentParam } from "./query-params.ts";

const NO_BASIS: ReadonlySet<Metric> = new Set();

/**
 * GET /benchmarks. `sample_size` is the distinct businesses of the metrics included (withheld ones count for
 * nothing), counted over the metrics whose every cell is published (`privacy/count-basis.ts`).
 */
export const benchmarksEndpoint = defineDataEndpoint({
  endpoint: "GET /benchmarks",
  operationId: "getBenchmarks",
  summary: "Aggregate percentiles of every metric of a category",
  description:
    "Percentile sets (p10, p25, p50, p75, p90, mean) of the category's metrics for one period. Metrics whose cell is withheld (fewer businesses than the publication minimum, or withheld so that a smaller segment cannot be derived by subtraction: see docs/privacy.md) are left out; when none qualifies the answer is 404 `data.insufficient_sample`. `sample_size` counts the distinct businesses that reported at least one of the metrics included (a business reporting several counts once; businesses of withheld metrics only are not counted). Only metrics whose every cell (`all`'s and each segment's) is published are counted together; otherwise it is the largest included cell's size when that is larger, a lower bound (docs/privacy.md).",
  query: v.object({ category: categoryParam, segment: v.optional(segmentParam), period: v.optional(quarterDefaultPeriodParam) }),
  response: v.object({
    category: v.string(),
    segment: v.string(),
    period: v.string(),
    generated_at: Timestamp,
    sample_size: v.pipe(v.number(), v.integer()),
    metrics: v.record(v.string(), PercentileSetSchema),
  }),
  errors: [404, 422],
  async handle({ query, source, app, now }) {
    const segment = segmentOf(query.segment);
    const period = await resolveQuarter(source, query.category, segment, query.period);
    const wanted = metricsOf(query.category);
    const cells = await source.cells(query.category, segment, period, wanted);
    if (cells.size === 0) return noData(source, query.category, segment, period);
    const minimum = app.config.data.minSampleSize;
    const reasons = await withheldReasons(source, query.category, segment, period, cells, minimum);
    let metrics = "";
    const included = new Map<Metric, Cell>();
    const refused: WithheldReason[] = [];
    for (const m of wanted) {
      const cell = cells.get(m);
      if (cell === undefined) continue;
      const reason = reasons.get(m) ?? null;
      if (reason !== null) {
        refused.push(reason);
        continue;
      }
      // Metric keys are catalogue identifiers: no escaping needed.
      metrics += `${metrics === "" ? "" : ","}"${m}":${cellPercentilesJson(cell)}`;
      included.set(m, cell);
    }
    if (included.size === 0) throw insufficientSample(query.category, segment, period, null, combinedReason(refused), minimum);
    // One metric's answer is its cell's size; only several need the basis (which reads every segment once).
    const sampleSize = sampleSizeOf(included, included.size > 1 ? await countBasisOf(source, query.category, period, minimum) : NO_BASIS);
    return okJson(
      `{"category":"${query.category}","segment":${JSON.stringify(segment)},"period":${JSON.stringify(period)},"generated_at":"${isoTime(now)}","sample_size":${sampleSize},"metrics":{${metrics}}}`,
    );
  },
});
