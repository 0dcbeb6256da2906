/** GET /data/v1/report: a merchant's snapshot with its comparison, insights and score, in one document. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { ok } from "../reply.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { Timestamp } from "./doc-schemas.ts";
import { analyseMerchant, requireRanked } from "./merchant-analysis.ts";
import { MerchantQuery } from "./merchant-params.ts";
import { CompareSchema, compareView, InsightsSchema, insightsView, ScoreSchema, scoreView, SnapshotSchema, snapshotView } from "./merchant-views.ts";

/** GET /report (scope `report:read`). Its parts are exactly the bodies of the individual endpoints. */
export const reportEndpoint = defineDataEndpoint({
  endpoint: "GET /report",
  operationId: "getReport",
  summary: "A merchant report bundling compare, insights and score",
  description:
    "The merchant's snapshot (the latest period, or `period`) with the bodies `/merchant/compare`, `/merchant/insights` and `/merchant/score` give for it, computed together from one reading of the data, and `generated_at`. Errors as `/merchant/compare`.",
  query: MerchantQuery,
  response: v.object({ merchant_id: v.string(), generated_at: Timestamp, snapshot: SnapshotSchema, compare: CompareSchema, insights: InsightsSchema, score: ScoreSchema }),
  errors: [404, 422],
  async handle(call) {
    const a = await analyseMerchant(call, call.query.merchant_id, call.query.period);
    await requireRanked(call, a);
    return ok({
      merchant_id: a.snapshot.merchantId,
      generated_at: isoTime(call.now),
      snapshot: snapshotView(a.snapshot),
      compare: compareView(a),
      insights: insightsView(a),
      score: scoreView(a),
    });
  },
});
