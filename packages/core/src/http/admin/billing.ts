/** The billing resource of the admin API: release an account's hold on automatic charges. */
import * as v from "valibot";
import { ok } from "../reply.ts";
import { accountNotFound } from "./account-view.ts";
import { ACCOUNT_ID, op } from "./admin-op.ts";
import type { AccountStore, BillingStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): AccountStore & BillingStore => app.storage;

/** POST /accounts/{account_id}/billing/release: lifts the hold on automatic charges for the period. */
export const releaseHold = op({
  method: "POST",
  path: "/accounts/{account_id}/billing/release",
  doc: {
    operationId: "adminReleaseChargeHold",
    summary: "Release an account's hold on automatic charges",
    description:
      "After the period's ceiling of automatic charges (`billing.maxAutoChargesPerPeriod`, paid charges included) an account is held: " +
      "its exhausted quota answers 402 `quota.held` and nothing more is charged until a person acts. This starts the ceiling's count " +
      "afresh for the current billing period; the next refused request starts a charge again. No body.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "Whether the current period had a quota to release.", schema: v.object({ account_id: v.string(), released: v.boolean() }) },
    errors: [404],
  },
  async handle(app, params, _body, now, _request, _query, audit) {
    const id = params.account_id as string;
    if ((await store(app).getAccount(id)) === null) throw accountNotFound(id);
    const released = await store(app).releaseChargeHold({ accountId: id, now, anchorDay: app.config.billing.anchorDay, audit: audit.draft("billing.release", id, id) });
    if (released) app.logger.info("automatic charges released by the operator", { account_id: id });
    return ok({ account_id: id, released });
  },
});
