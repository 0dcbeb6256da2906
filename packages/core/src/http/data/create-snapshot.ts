/** POST /data/v1/merchant/vcfs: stores a merchant's financial snapshot for the key's account and environment. */
import * as v from "valibot";
import { ServiceError } from "../../errors/service-error.ts";
import { newId } from "../../ids/new-id.ts";
import type { SnapshotRecord, SnapshotStore } from "../../storage/types.ts";
import { readJson } from "../read-json-body.ts";
import { defineDataEndpoint } from "./data-endpoint.ts";
import { SnapshotSchema, snapshotView } from "./merchant-views.ts";
import { parseSnapshotBody, SnapshotBody } from "./snapshot-body.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): SnapshotStore => app.storage;

/** POST /merchant/vcfs. One snapshot per merchant and period: posting the period again replaces it. */
export const createSnapshotEndpoint = defineDataEndpoint({
  endpoint: "POST /merchant/vcfs",
  operationId: "createMerchantSnapshot",
  summary: "Store a merchant financial snapshot",
  description:
    "Answers 200 with the stored snapshot (every data endpoint answers 200 on success, as the spec says). Snapshots belong to the key's account and environment (test-key snapshots never mix with live ones). A merchant has at most one snapshot per period: posting the same `merchant_id` and `period` again replaces the earlier snapshot (a correction), which is deleted; the new one gets a new `vcfs_id`, and `replaced_vcfs_id` names the one it replaced. The body is JSON (`Content-Type: application/json`, at most 1 MB). Unknown category: `validation.invalid_category`; unknown metric key: `validation.invalid_metric`; a metric the category does not offer: `validation.metric_not_offered`; a malformed period or a value that is not a finite number: `validation.invalid_parameter`; any other problem with the body: `validation.invalid_body`.",
  body: SnapshotBody,
  response: v.object({
    ...SnapshotSchema.entries,
    replaced_vcfs_id: v.pipe(v.nullable(v.string()), v.description("The snapshot of the same merchant and period this one replaced, or null.")),
  }),
  errors: [400, 413, 415, 422],
  async handle({ request, app, account, dataset, now }) {
    const input = parseSnapshotBody(await readJson(request));
    const snapshot: SnapshotRecord = {
      id: newId("vcfs", app.clock, app.idRandom),
      accountId: account.id,
      environment: dataset,
      merchantId: input.merchantId,
      category: input.category,
      segment: input.segment,
      period: input.period,
      metrics: input.metrics,
      createdAt: now,
    };
    const replaced = await store(app).saveSnapshot(snapshot);
    // The account was erased after this request's key was checked: the key no longer exists, and nothing was stored.
    if (replaced === "deleted") throw new ServiceError(401, "auth.unknown_key", "Unknown API key.");
    return { status: 200, body: { ...snapshotView(snapshot), replaced_vcfs_id: replaced === null ? null : replaced.id } };
  },
});
