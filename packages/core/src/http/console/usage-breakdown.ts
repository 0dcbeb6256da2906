/** GET /usage/breakdown: the signed-in account's data requests by hour or day, key, endpoint and outcome. */
import { BREAKDOWN_DESCRIPTION, BreakdownQuery, BreakdownSchema, usageBreakdown } from "../analytics/usage-breakdown.ts";
import { ok } from "../reply.ts";
import { defineConsoleRoute } from "./define-console-route.ts";

/** GET /usage/breakdown. */
export const usageBreakdownRoute = defineConsoleRoute({
  method: "GET",
  path: "/usage/breakdown",
  operationId: "getUsageBreakdown",
  summary: "Usage by key, endpoint and outcome",
  description: BREAKDOWN_DESCRIPTION,
  query: BreakdownQuery,
  success: { status: 200, description: "One page of groups.", schema: BreakdownSchema },
  errors: [],
  async handle({ app, accountId, now, query }) {
    return ok(await usageBreakdown(app, accountId, query, now));
  },
});
