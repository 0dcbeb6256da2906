/**
 * The shared storage conformance suite: written once, run against every Storage implementation (memory,
 * SQLite, PostgreSQL). It checks the contract's guarantees, including exactness under concurrency. One file per
 * facet of the contract (`storage/types.ts`); each file makes its own fresh store, or one per case.
 */
import type { Storage } from "../storage/types.ts";
import { accountLifecycleConformance } from "./account-lifecycle-conformance.ts";
import { auditConformance } from "./audit-conformance.ts";
import { recoverBudgetConformance } from "./recover-budget-conformance.ts";
import { accountsSessionsConformance } from "./accounts-sessions-conformance.ts";
import { keysConformance } from "./keys-conformance.ts";
import { admissionConformance } from "./admission-conformance.ts";
import { quotaConformance } from "./quota-conformance.ts";
import { suspensionConformance } from "./suspension-conformance.ts";
import { outboxConformance } from "./outbox-conformance.ts";
import { retentionConformance } from "./retention-conformance.ts";
import { cellsConformance } from "./cells-conformance.ts";
import { snapshotsConformance } from "./snapshots-conformance.ts";

/** How the suite obtains a fresh, migrated, empty store, and disposes of it. */
export interface ConformanceTarget {
  /** A fresh empty store whose methods honour the `now` they are given (the app clock). */
  create(): Promise<Storage>;
  /** Called after the store is closed (drop the database, delete the file…). */
  destroy?(storage: Storage): Promise<void>;
}

/** Registers the conformance suite for one implementation under `name`. */
export function storageConformance(name: string, target: ConformanceTarget): void {
  accountsSessionsConformance(name, target);
  keysConformance(name, target);
  admissionConformance(name, target);
  quotaConformance(name, target);
  suspensionConformance(name, target);
  outboxConformance(name, target);
  retentionConformance(name, target);
  cellsConformance(name, target);
  snapshotsConformance(name, target);
  accountLifecycleConformance(name, target);
  auditConformance(name, target);
  recoverBudgetConformance(name, target);
}
