/** GET /data/v1/merchant/compare: each metric of a merchant's snapshot ranked in its category/segment cell. */
import { ok } from "../reply.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { analyseMerchant, requireRanked } from "./merchant-analysis.ts";
import { MerchantQuery } from "./merchant-params.ts";
import { CompareSchema, compareView } from "./merchant-views.ts";

/** GET /merchant/compare (scopes `merchant:read` and `compare:read`). */
export const compareEndpoint = defineDataEndpoint({
  endpoint: "GET /merchant/compare",
  operationId: "compareMerchant",
  summary: "Rank a merchant's metrics against its category",
  description:
    "For each metric of the merchant's snapshot (the latest period, or `period`): its value, its percentile rank among the businesses of the snapshot's category and segment in the same period, the cell's p25/p50/p75, the metric's direction and `better_than_pct`, the share of peers it beats in the good direction. A metric without a cell in that period is ranked in the latest period of the same granularity with data (`benchmark_period`, `fallback: true`); withheld cells (below the publication minimum, or complementary suppression: docs/privacy.md) rank nothing (`unranked`, with `withheld_reason`). Unknown merchant: 404 `not_found`; no snapshot for `period`, or nothing rankable: 404 `data.not_found` (`data.insufficient_sample` when only small cells exist).",
  query: MerchantQuery,
  response: CompareSchema,
  errors: [404, 422],
  async handle(call) {
    const a = await analyseMerchant(call, call.query.merchant_id, call.query.period);
    await requireRanked(call, a);
    return ok(compareView(a));
  },
});
