/** GET /data/v1/merchant/score: a merchant's 0–100 score, its grade and its components. */
import { ok } from "../reply.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { analyseMerchant, requireRanked } from "./merchant-analysis.ts";
import { MerchantQuery } from "./merchant-params.ts";
import { ScoreSchema, scoreView } from "./merchant-views.ts";

/** GET /merchant/score (scope `score:read`). */
export const scoreEndpoint = defineDataEndpoint({
  endpoint: "GET /merchant/score",
  operationId: "getMerchantScore",
  summary: "A merchant's 0–100 score with its components",
  description:
    "score = Σ wᵢ·rᵢ over the n ranked metrics of the snapshot (the latest period, or `period`), with rᵢ the metric's direction-adjusted rank (`better_than_pct` of `/merchant/compare`: the share of peers it beats in its good direction) and equal weights wᵢ = 1/n: the mean standing, rounded to one decimal. Grade: A from 80, B from 60, C from 40, D from 20, F below. Metrics that cannot be ranked are left out (`unranked`). Unknown merchant: 404 `not_found`; no snapshot for `period`, or nothing rankable: 404 `data.not_found`.",
  query: MerchantQuery,
  response: ScoreSchema,
  errors: [404, 422],
  async handle(call) {
    const a = await analyseMerchant(call, call.query.merchant_id, call.query.period);
    await requireRanked(call, a);
    return ok(scoreView(a));
  },
});
