/**
 * Every data endpoint, in the order the OpenAPI document lists them. To implement a stub, write its file
 * (a `defineDataEndpoint`, like benchmarks.ts) and replace its `notImplementedEndpoint` line here.
 */
import { benchmarksEndpoint } from "./benchmarks.ts";
import type { AnyDataEndpoint } from "./data-endpoint.ts";
import { notImplementedEndpoint } from "./data-endpoint.ts";
import { distributionEndpoint } from "./distribution.ts";
import { historyEndpoint } from "./history.ts";
import { percentileEndpoint } from "./percentile.ts";

/** The data endpoints under `/data/v1`. */
export const DATA_ENDPOINTS: readonly AnyDataEndpoint[] = [
  benchmarksEndpoint,
  percentileEndpoint,
  distributionEndpoint,
  historyEndpoint,
  notImplementedEndpoint("GET /segments", "listSegments", "Segments of a category"),
  notImplementedEndpoint("GET /segments/breakdown", "getSegmentBreakdown", "A metric broken down by segment"),
  notImplementedEndpoint("GET /merchant/vcfs", "listMerchantSnapshots", "List the account's merchant financial snapshots"),
  notImplementedEndpoint("POST /merchant/vcfs", "createMerchantSnapshot", "Store a merchant financial snapshot"),
  notImplementedEndpoint("GET /merchant/compare", "compareMerchant", "Rank a merchant's metrics against its category"),
  notImplementedEndpoint("GET /merchant/insights", "getMerchantInsights", "Findings from a merchant's ranks and trends"),
  notImplementedEndpoint("GET /merchant/score", "getMerchantScore", "A merchant's 0–100 score with its components"),
  notImplementedEndpoint("GET /report", "getReport", "A merchant report bundling compare, insights and score"),
  notImplementedEndpoint("GET /export/xbrl", "exportXbrl", "A snapshot as an XBRL instance document"),
];
