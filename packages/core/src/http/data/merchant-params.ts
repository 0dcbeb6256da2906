/** The merchant endpoints' query parameters, as valibot schemas that validate requests and document them. */
import * as v from "valibot";
import { isMerchantId, MERCHANT_ID_MAX } from "../../merchant/merchant-id.ts";
import { param } from "../query.ts";
import { snapshotPeriodParam } from "./query-params.ts";

/** `merchant_id`: the account's own identifier of a merchant, as given when its snapshots were posted. */
export const merchantIdParam = param(
  v.pipe(
    v.string(),
    v.check(isMerchantId),
    v.description(`The merchant's identifier, as posted with its snapshots (1 to ${MERCHANT_ID_MAX} characters).`),
  ),
  { expect: `must be 1 to ${MERCHANT_ID_MAX} characters, without control characters or white space at either end` },
);

/** `vcfs_id`: a snapshot's identifier (`vcfs_<ULID>`). */
export const snapshotIdParam = param(
  v.pipe(v.string(), v.regex(/^vcfs_[0-9A-HJKMNP-TV-Z]{26}$/), v.description("A snapshot's identifier (`vcfs_…`); default: the merchant's latest snapshot.")),
  { expect: "must be a snapshot id `vcfs_…`" },
);

/** The query of the merchant analyses (compare, insights, score, report): the merchant, and optionally its snapshot's period. */
export const MerchantQuery = v.object({
  merchant_id: merchantIdParam,
  period: v.optional(snapshotPeriodParam),
});
