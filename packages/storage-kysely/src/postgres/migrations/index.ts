/** The PostgreSQL migrations, one released file each: append a file and its line here and in ../../migrations-manifest.txt. */
import { releasedMigrations } from "../../migration.ts";
import * as m0001 from "./0001-initial-schema.ts";
import * as m0002 from "./0002-admit-and-outbox-functions.ts";
import * as m0003 from "./0003-merchant-snapshots.ts";
import * as m0004 from "./0004-delivery-order.ts";
import * as m0005 from "./0005-account-versions.ts";
import * as m0006 from "./0006-admit-arrays.ts";
import * as m0007 from "./0007-admission-epoch.ts";
import * as m0008 from "./0008-quota-row-in-memory.ts";
import * as m0010 from "./0010-quota-holds.ts";
import * as m0013 from "./0013-sessions-end.ts";
import * as m0014 from "./0014-window-chunks.ts";
import * as m0016 from "./0016-webhook-steering.ts";
import * as m0017 from "./0017-account-status.ts";
import * as m0018 from "./0018-console-ip-exempt.ts";
import * as m0020 from "./0020-test-day-counters.ts";
import * as m0021 from "./0021-cell-businesses.ts";
import * as m0022 from "./0022-account-tombstones.ts";
import * as m0023 from "./0023-retention-indexes.ts";
import * as m0024 from "./0024-audit-log.ts";
import * as m0025 from "./0025-recover-budgets.ts";
import * as m0026 from "./0026-usage-analytics.ts";
import * as m0027 from "./0027-unfinished-erasures.ts";

export const POSTGRES_MIGRATIONS = releasedMigrations({
  "0001-initial-schema": m0001,
  "0002-admit-and-outbox-functions": m0002,
  "0003-merchant-snapshots": m0003,
  "0004-delivery-order": m0004,
  "0005-account-versions": m0005,
  "0006-admit-arrays": m0006,
  "0007-admission-epoch": m0007,
  "0008-quota-row-in-memory": m0008,
  "0010-quota-holds": m0010,
  "0013-sessions-end": m0013,
  "0014-window-chunks": m0014,
  "0016-webhook-steering": m0016,
  "0017-account-status": m0017,
  "0018-console-ip-exempt": m0018,
  "0020-test-day-counters": m0020,
  "0021-cell-businesses": m0021,
  "0022-account-tombstones": m0022,
  "0023-retention-indexes": m0023,
  "0024-audit-log": m0024,
  "0025-recover-budgets": m0025,
  "0026-usage-analytics": m0026,
  "0027-unfinished-erasures": m0027,
});
