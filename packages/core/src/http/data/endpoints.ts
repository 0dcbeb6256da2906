/** Every data endpoint, in the order the OpenAPI document lists them: one `defineDataEndpoint` per file. */
import { benchmarksEndpoint } from "./benchmarks.ts";
import { compareEndpoint } from "./compare.ts";
import { createSnapshotEndpoint } from "./create-snapshot.ts";
import type { AnyDataEndpoint } from "./data-endpoint.ts";
import { distributionEndpoint } from "./distribution.ts";
import { exportXbrlEndpoint } from "./export-xbrl.ts";
import { historyEndpoint } from "./history.ts";
import { insightsEndpoint } from "./insights.ts";
import { listSnapshotsEndpoint } from "./list-snapshots.ts";
import { percentileEndpoint } from "./percentile.ts";
import { reportEndpoint } from "./report.ts";
import { scoreEndpoint } from "./score.ts";
import { segmentBreakdownEndpoint } from "./segment-breakdown.ts";
import { segmentsEndpoint } from "./segments.ts";

/** The data endpoints under `/data/v1`. */
export const DATA_ENDPOINTS: readonly AnyDataEndpoint[] = [
  benchmarksEndpoint,
  percentileEndpoint,
  distributionEndpoint,
  historyEndpoint,
  segmentsEndpoint,
  segmentBreakdownEndpoint,
  listSnapshotsEndpoint,
  createSnapshotEndpoint,
  compareEndpoint,
  insightsEndpoint,
  scoreEndpoint,
  reportEndpoint,
  exportXbrlEndpoint,
];
