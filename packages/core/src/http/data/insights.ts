/** GET /data/v1/merchant/insights: strengths, weaknesses and trends of a merchant's snapshot. */
import { ok } from "../reply.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { analyseMerchant } from "./merchant-analysis.ts";
import { MerchantQuery } from "./merchant-params.ts";
import { InsightsSchema, insightsView } from "./merchant-views.ts";

/** GET /merchant/insights (scope `insights:read`). Trends need no benchmark data, so no rank is required. */
export const insightsEndpoint = defineDataEndpoint({
  endpoint: "GET /merchant/insights",
  operationId: "getMerchantInsights",
  summary: "Findings from a merchant's ranks and trends",
  description:
    "Findings about the merchant's snapshot (the latest period, or `period`), each `{kind, metric, message, evidence}`: `strength` for a metric in the top quartile of its peers (better than at least 75% of them in the metric's good direction), `weakness` for the bottom quartile (at most 25%), and `improving` or `worsening` for a metric that moved since the previous snapshot (the latest earlier one of the same granularity), judged by the metric's direction. Ranks are those of `/merchant/compare`. Unknown merchant: 404 `not_found`; no snapshot for `period`: 404 `data.not_found`.",
  query: MerchantQuery,
  response: InsightsSchema,
  errors: [404, 422],
  async handle(call) {
    return ok(insightsView(await analyseMerchant(call, call.query.merchant_id, call.query.period)));
  },
});
