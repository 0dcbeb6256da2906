/** The SQLite migrations, one released file each: append a file and its line here and in ../../migrations-manifest.txt. */
import { releasedMigrations } from "../../migration.ts";
import * as m0001 from "./0001-initial-schema.ts";
import * as m0002 from "./0002-merchant-snapshots.ts";
import * as m0003 from "./0003-account-versions.ts";
import * as m0005 from "./0005-quota-holds.ts";
import * as m0008 from "./0008-sessions-end.ts";
import * as m0009 from "./0009-window-chunks.ts";
import * as m0011 from "./0011-webhook-steering.ts";
import * as m0012 from "./0012-account-status.ts";
import * as m0013 from "./0013-console-ip-exempt.ts";
import * as m0016 from "./0016-cell-businesses.ts";
import * as m0017 from "./0017-account-tombstones.ts";
import * as m0023 from "./0023-retention-indexes.ts";
import * as m0024 from "./0024-audit-log.ts";
import * as m0025 from "./0025-recover-budgets.ts";
import * as m0026 from "./0026-usage-analytics.ts";
import * as m0027 from "./0027-unfinished-erasures.ts";

export const SQLITE_MIGRATIONS = releasedMigrations({
  "0001-initial-schema": m0001,
  "0002-merchant-snapshots": m0002,
  "0003-account-versions": m0003,
  "0005-quota-holds": m0005,
  "0008-sessions-end": m0008,
  "0009-window-chunks": m0009,
  "0011-webhook-steering": m0011,
  "0012-account-status": m0012,
  "0013-console-ip-exempt": m0013,
  "0016-cell-businesses": m0016,
  "0017-account-tombstones": m0017,
  "0023-retention-indexes": m0023,
  "0024-audit-log": m0024,
  "0025-recover-budgets": m0025,
  "0026-usage-analytics": m0026,
  "0027-unfinished-erasures": m0027,
});
