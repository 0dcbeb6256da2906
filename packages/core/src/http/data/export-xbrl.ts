/** GET /data/v1/export/xbrl: a merchant's snapshot as an XBRL 2.1 instance document. */
import * as v from "valibot";
import { ServiceError } from "../../errors/service-error.ts";
import { latestSnapshot } from "../../merchant/snapshot-order.ts";
import { xbrlInstance } from "../../merchant/xbrl-instance.ts";
import type { Reply } from "../reply.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { merchantSnapshots } from "./merchant-analysis.ts";
import { merchantIdParam, snapshotIdParam } from "./merchant-params.ts";
import type { SnapshotStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): SnapshotStore => app.storage;

/** The media type of the document. */
export const XML_TYPE = "application/xml";

/** GET /export/xbrl (scope `export:read`). */
export const exportXbrlEndpoint = defineDataEndpoint({
  endpoint: "GET /export/xbrl",
  operationId: "exportXbrl",
  summary: "A snapshot as an XBRL instance document",
  description:
    "An XBRL 2.1 instance (`application/xml`) of the merchant's snapshot `vcfs_id`, or its latest: `xbrli:xbrl` with a `link:schemaRef` to the benchdata taxonomy, one context (the entity identifier is `merchant_id` under the scheme `https://benchdata.dev/merchant-id`; the period runs from the first to the last day of the snapshot's period), a `pure` unit for ratios and multiples and an ISO 4217 unit for money (the operator's currency), and one fact per metric (`bd:GrossMargin`…) whose `decimals` is the number of decimal places the value was posted with. Unknown merchant, or a `vcfs_id` not of that merchant: 404 `not_found`.",
  query: v.object({ merchant_id: merchantIdParam, vcfs_id: v.optional(snapshotIdParam) }),
  mediaType: XML_TYPE,
  errors: [404, 422],
  async handle(call): Promise<Reply> {
    const { merchant_id: merchantId, vcfs_id: snapshotId } = call.query;
    const snapshot =
      snapshotId === undefined
        ? latestSnapshot(await merchantSnapshots(call, merchantId))
        : await store(call.app).getSnapshot(call.account.id, call.dataset, snapshotId);
    if (snapshot === null || snapshot.merchantId !== merchantId) {
      throw new ServiceError(404, "not_found", `No snapshot \`${snapshotId}\` of merchant ${JSON.stringify(merchantId)} in this account's ${call.dataset} snapshots.`);
    }
    return { status: 200, json: xbrlInstance(snapshot, call.app.config.currency), contentType: XML_TYPE };
  },
});
