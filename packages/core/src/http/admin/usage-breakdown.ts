/** GET /accounts/{account_id}/usage/breakdown: the operator's view of one account's usage analytics. */
import { BREAKDOWN_DESCRIPTION, BreakdownQuery, BreakdownSchema, usageBreakdown } from "../analytics/usage-breakdown.ts";
import type { AccountStore } from "../../storage/types.ts";
import { ok } from "../reply.ts";
import { accountNotFound } from "./account-view.ts";
import { ACCOUNT_ID, op } from "./admin-op.ts";

/** GET /accounts/{account_id}/usage/breakdown: as the console's, for any account (404 for none, or an erased one). */
export const adminUsageBreakdown = op({
  method: "GET",
  path: "/accounts/{account_id}/usage/breakdown",
  query: BreakdownQuery,
  doc: {
    operationId: "adminUsageBreakdown",
    summary: "An account's usage by key, endpoint and outcome",
    description: BREAKDOWN_DESCRIPTION,
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "One page of groups.", schema: BreakdownSchema },
    errors: [404],
  },
  async handle(app, params, _body, now, _request, query) {
    const id = params.account_id as string;
    const accounts: AccountStore = app.storage;
    if ((await accounts.getAccount(id)) === null) throw accountNotFound(id);
    return ok(await usageBreakdown(app, id, query, now));
  },
});
