/** GET /data/v1/benchmarks/history: a metric's quartiles over recent periods, ascending, ending at the latest. */
import * as v from "valibot";
import { okJson } from "../reply.ts";
import { jsonNumber } from "./round-output.ts";
import { cellJson, cellPercentiles } from "./cell-summary.ts";
import { assertOffered, insufficientSample, noData } from "./cell-lookup.ts";
import { defineDataEndpoint, segmentOf } from "./data-endpoint.ts";
import { withheldReason } from "./publication.ts";
import type { WithheldReason } from "../../privacy/suppression.ts";
import { categoryParam, granularityParam, integerParam, metricParam, segmentParam } from "./query-params.ts";

/** GET /benchmarks/history. Periods whose cell is withheld are left out. */
export const historyEndpoint = defineDataEndpoint({
  endpoint: "GET /benchmarks/history",
  operationId: "getHistory",
  summary: "A metric's quartiles across periods",
  description:
    "p25, p50, p75 and sample size for up to `periods` periods with data, in ascending order, ending with the latest. Periods whose cell is withheld (below the publication minimum, or complementary suppression: see docs/privacy.md) are left out (404 `data.insufficient_sample` if that leaves none). Monthly periods are `YYYY-MM`.",
  query: v.object({
    category: categoryParam,
    metric: metricParam,
    periods: v.optional(integerParam(1, 20, "Number of periods, ending at the latest."), "4"),
    granularity: v.optional(granularityParam, "quarterly"),
    segment: v.optional(segmentParam),
  }),
  response: v.object({
    metric: v.string(),
    category: v.string(),
    segment: v.string(),
    granularity: v.picklist(["quarterly", "monthly"]),
    history: v.array(v.object({ period: v.string(), p25: v.number(), p50: v.number(), p75: v.number(), sample_size: v.pipe(v.number(), v.integer()) })),
  }),
  errors: [404, 422],
  async handle({ query, source, app }) {
    const { category, metric, periods, granularity } = query;
    assertOffered(category, metric);
    const segment = segmentOf(query.segment);
    const list = await source.recentPeriods(category, segment, metric, granularity, periods);
    if (list.length === 0) {
      return noData(source, category, segment, null, { granularity, ask: () => `granularity=${granularity === "quarterly" ? "monthly" : "quarterly"}` });
    }
    const found = await Promise.all(list.map((p) => source.cells(category, segment, p, [metric])));
    const minimum = app.config.data.minSampleSize;
    const reasons = await Promise.all(
      list.map((p, i) => {
        const cell = found[i]?.get(metric);
        return cell === undefined ? null : withheldReason(source, category, segment, p, metric, cell, minimum);
      }),
    );
    let history = "";
    let included = 0;
    // When every period is withheld, the refusal names the latest one and gives that cell's reason.
    let refused: { period: string; reason: WithheldReason } | null = null;
    for (let i = 0; i < list.length; i++) {
      const cell = found[i]?.get(metric);
      if (cell === undefined) continue;
      const reason = reasons[i] ?? null;
      if (reason !== null) {
        refused = { period: list[i] as string, reason };
        continue;
      }
      const quartiles = cellJson(cell, "quartiles", () => {
        const p = cellPercentiles(cell);
        return `"p25":${jsonNumber(p.p25)},"p50":${jsonNumber(p.p50)},"p75":${jsonNumber(p.p75)},"sample_size":${cell.sampleSize}`;
      });
      history += `${included === 0 ? "" : ","}{"period":${JSON.stringify(list[i])},${quartiles}}`;
      included++;
    }
    if (included === 0) throw insufficientSample(category, segment, refused?.period ?? (list[list.length - 1] as string), metric, refused?.reason ?? "below_minimum", minimum);
    return okJson(`{"metric":"${metric}","category":"${category}","segment":${JSON.stringify(segment)},"granularity":"${granularity}","history":[${history}]}`);
  },
});
