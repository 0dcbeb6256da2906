/** GET /data/v1/merchant/vcfs: the account's snapshots in the key's environment, newest first. */
import * as v from "valibot";
import { ok } from "../reply.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { merchantIdParam } from "./merchant-params.ts";
import { SnapshotSchema, snapshotView } from "./merchant-views.ts";
import { integerParam } from "./query-params.ts";
import type { SnapshotStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): SnapshotStore => app.storage;

/** GET /merchant/vcfs. A merchant without snapshots gives an empty list, not a 404. */
export const listSnapshotsEndpoint = defineDataEndpoint({
  endpoint: "GET /merchant/vcfs",
  operationId: "listMerchantSnapshots",
  summary: "List the account's merchant financial snapshots",
  description: "The snapshots of the key's account and environment (optionally of one merchant), newest first by creation time, at most `limit`.",
  query: v.object({
    merchant_id: v.optional(merchantIdParam),
    limit: v.optional(integerParam(1, 100, "How many snapshots, newest first."), "20"),
  }),
  response: v.object({ data: v.array(SnapshotSchema) }),
  errors: [422],
  async handle({ query, app, account, dataset }) {
    const list = await store(app).listSnapshots(account.id, dataset, { ...(query.merchant_id !== undefined ? { merchantId: query.merchant_id } : {}), limit: query.limit });
    return ok({ data: list.map(snapshotView) });
  },
});
